package security

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth/oidctest"
)

// A server with auth.oidc takes ID tokens of its issuer (a local one
// here: discovery and keys over HTTP, tokens signed with a test key) as
// bearer tokens, over gRPC and HTTP/JSON; the policy binds the names the
// issuer gives (with the configured prefix). Expired, forged and
// other-audience tokens are refused with 401.
func TestOIDCIDTokensAuthenticate(t *testing.T) {
	is := oidctest.New(t)
	pki, _ := lab(t, []string{"east"}, nil, []string{"ops"}, "bindings:\n  - {subjects: [\"oidc:alice@example.com\"], role: admin}\n  - {subjects: [\"oidc:bob@example.com\"], role: viewer}\n")
	east := startRegionAuth(t, pki, "east", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("oidc: {issuer: %q, audience: peloton, usernameClaim: email, usernamePrefix: \"oidc:\"}", is.URL), "")
	now := time.Now()
	idToken := func(email string, over map[string]any) string {
		c := map[string]any{"sub": email, "aud": "peloton", "email": email, "email_verified": true, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range over {
			c[k] = v
		}
		return is.Token(t, c)
	}
	ctx := context.Background()
	alice := caller{name: "alice", token: idToken("alice@example.com", nil)}
	who, err := pb.NewAuthServiceClient(east.conn(alice)).WhoAmI(ctx, &pb.WhoAmIRequest{})
	if err != nil || who.GetName() != "oidc:alice@example.com" || who.GetMethod() != "oidc" || len(who.GetRoles()) != 1 || who.GetRoles()[0] != "admin" {
		t.Fatalf("whoami with alice's ID token: %v, %v", who, err)
	}
	if _, err := pb.NewPoolServiceClient(east.conn(alice)).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: "/oidc"}}); err != nil {
		t.Fatalf("alice (admin by OIDC) creating a pool: %v", err)
	}
	bob := caller{name: "bob", token: idToken("bob@example.com", nil)}
	if _, err := pb.NewPoolServiceClient(east.conn(bob)).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: "/bob"}}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("bob (viewer by OIDC) creating a pool: %v, want PermissionDenied", err)
	}
	if code, body := east.http(bob, "GET", "/v1/auth/whoami", ""); code != 200 {
		t.Fatalf("bob's whoami over HTTP: %d %s", code, body)
	}
	for _, c := range []struct{ what, token string }{
		{"expired", idToken("alice@example.com", map[string]any{"exp": now.Add(-time.Minute).Unix()})},
		{"for another audience", idToken("alice@example.com", map[string]any{"aud": "other"})},
		{"signed with a key the issuer never published", is.ForgedToken(t, map[string]any{"sub": "x", "aud": "peloton", "email": "alice@example.com", "email_verified": true, "exp": now.Add(time.Hour).Unix()})},
	} {
		_, err := pb.NewAuthServiceClient(east.conn(caller{name: "x", token: c.token})).WhoAmI(ctx, &pb.WhoAmIRequest{})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("an ID token %s over gRPC: %v, want Unauthenticated", c.what, err)
		}
		if code, body := east.http(caller{name: "x", token: c.token}, "GET", "/v1/jobs", ""); code != 401 {
			t.Errorf("an ID token %s over HTTP: %d %s, want 401", c.what, code, body)
		} else {
			t.Logf("%s: %s", c.what, body)
		}
	}
}
