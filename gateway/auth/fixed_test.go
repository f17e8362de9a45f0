package auth

import (
	"errors"
	"testing"
	"time"
)

// A region token identifies a region, which may assert the caller it
// forwards for; a user's token may not, and an unknown token is refused.
func TestRegionTokens(t *testing.T) {
	a := &Authenticator{
		Tokens:       FixedTokens(map[string]string{"pel_user": "dev"}),
		RegionTokens: FixedTokens(map[string]string{"pel_east": "east"}),
	}
	now := time.Now()
	bearer := func(tok string) []string { return []string{"Bearer " + tok} }
	alice := Identity{Name: "alice", Method: ByToken}.Encode()

	cases := []struct {
		name    string
		creds   Credentials
		want    Identity
		wantErr error
	}{
		{"user token", Credentials{Authorization: bearer("pel_user")}, Identity{Name: "dev", Method: ByToken}, nil},
		{"region token", Credentials{Authorization: bearer("pel_east")}, Identity{Name: "east", Method: ByRegion}, nil},
		{"region forwards", Credentials{Authorization: bearer("pel_east"), Caller: []string{alice}},
			Identity{Name: "alice", Method: ByToken, ForwardedBy: "east"}, nil},
		{"user asserts", Credentials{Authorization: bearer("pel_user"), Caller: []string{alice}}, Identity{}, ErrAssertion},
		{"unknown token", Credentials{Authorization: bearer("pel_other")}, Identity{}, ErrUnknownToken},
		{"nothing", Credentials{}, AnonymousIdentity, nil},
	}
	for _, c := range cases {
		got, err := a.Authenticate(now, c.creds)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: err %v, want %v", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
}
