package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/gateway/auth/oidctest"
)

func TestOIDCIDTokens(t *testing.T) {
	is := oidctest.New(t)
	o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: is.URL, Audience: "peloton", UsernameClaim: "email", UsernamePrefix: "oidc:"})
	if err != nil {
		t.Fatal(err)
	}
	a := &auth.Authenticator{Tokens: auth.StaticTokens(map[string]string{"opaque-token": "bob"}), OIDC: o}
	now := time.Now()
	claims := func(over map[string]any) map[string]any {
		c := map[string]any{"sub": "u-1", "aud": "peloton", "email": "alice@example.com", "email_verified": true,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range over {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	bearer := func(tok string) auth.Credentials { return auth.Credentials{Authorization: []string{"Bearer " + tok}} }

	id, err := a.Authenticate(now, bearer(is.Token(t, claims(nil))))
	if err != nil || id.Name != "oidc:alice@example.com" || id.Method != auth.ByOIDC {
		t.Fatalf("a good ID token: %+v, %v", id, err)
	}
	if id, err := a.Authenticate(now, bearer("opaque-token")); err != nil || id.Name != "bob" {
		t.Fatalf("a token of the token file beside OIDC: %+v, %v", id, err)
	}
	// A key rotated in at the issuer is fetched when a token names it.
	// (go-oidc joins a key fetch still finishing, which may predate the
	// rotation: the next try fetches again.)
	is.Rotate()
	rotated := is.Token(t, claims(nil))
	for deadline := time.Now().Add(2 * time.Second); ; {
		_, err := a.Authenticate(now, bearer(rotated))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token signed with a rotated key: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct {
		name, token, want string
	}{
		{"expired", is.Token(t, claims(map[string]any{"exp": now.Add(-time.Minute).Unix()})), "expired"},
		{"another audience", is.Token(t, claims(map[string]any{"aud": "someone-else"})), "audience"},
		{"another issuer", is.Token(t, claims(map[string]any{"iss": "https://evil.example"})), "different provider"},
		{"a key the issuer never published", is.ForgedToken(t, claims(nil)), "signature"},
		{"an unverified email", is.Token(t, claims(map[string]any{"email_verified": false})), "not verified"},
		{"no email", is.Token(t, claims(map[string]any{"email": nil})), `no "email" claim`},
		{"not a JWT", "a.b.c", "ID token refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.Authenticate(now, bearer(c.token))
			if !errors.Is(err, auth.ErrBadIDToken) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want ErrBadIDToken naming %q", err, c.want)
			}
			if strings.Contains(err.Error(), c.token) {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
}

func TestOIDCIssuerDown(t *testing.T) {
	o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: "http://127.0.0.1:1", Audience: "peloton"})
	if err != nil {
		t.Fatal(err)
	}
	a := &auth.Authenticator{OIDC: o}
	is := oidctest.New(t)
	tok := is.Token(t, map[string]any{"sub": "x", "aud": "peloton", "exp": time.Now().Add(time.Hour).Unix()})
	start := time.Now()
	for range 3 {
		if _, err := a.Authenticate(time.Now(), auth.Credentials{Authorization: []string{"Bearer " + tok}}); !errors.Is(err, auth.ErrBadIDToken) || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("issuer down: %v", err)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("three calls while the issuer is down took %v: discovery is not retried for each", d)
	}
	if _, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: "http://x"}); err == nil {
		t.Fatal("an OIDC config without an audience was accepted")
	}
}
