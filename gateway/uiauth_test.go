package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/gateway/auth/oidctest"
)

// GET /ui/auth-config tells anyone how to sign in: with an OIDC issuer
// configured, its endpoints (discovered by the server) and the client
// the UI is; the UI's pages may then call the issuer (CSP connect-src).
func TestUIAuthConfig(t *testing.T) {
	is := oidctest.New(t)
	withOIDC := func(issuer string) func(a *Auth) {
		return func(a *Auth) {
			o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: issuer, Audience: "peloton", ClientID: "peloton-ui"})
			if err != nil {
				t.Fatal(err)
			}
			a.Authenticator.OIDC = o
		}
	}
	get := func(t *testing.T, f *fixture) (uiAuthConfig, string) {
		t.Helper()
		code, h, body := f.doHTTP(t, "", "", "GET", "/ui/auth-config", "", nil)
		if code != 200 || h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET /ui/auth-config: %d %s %v", code, body, h)
		}
		var out uiAuthConfig
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		_, h, _ = f.doHTTP(t, "", "", "GET", "/ui/jobs", "", nil)
		return out, h.Get("Content-Security-Policy")
	}

	t.Run("oidc", func(t *testing.T) {
		f := startSecuredWith(t, withOIDC(is.URL))
		out, csp := get(t, f)
		o := out.OIDC
		if !out.Authentication || o == nil || o.Issuer != is.URL || o.ClientID != "peloton-ui" || o.RedirectPath != "/ui/signin/oidc" ||
			o.AuthorizationEndpoint != is.URL+"/auth" || o.TokenEndpoint != is.URL+"/token" || o.Problem != "" ||
			strings.Join(o.Scopes, " ") != "openid email profile" {
			t.Fatalf("auth-config: %+v %+v", out, o)
		}
		if !strings.Contains(csp, "connect-src 'self' "+is.URL+";") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("the UI's CSP: %s", csp)
		}
	})
	t.Run("issuer down", func(t *testing.T) {
		f := startSecuredWith(t, withOIDC("http://127.0.0.1:1"))
		out, csp := get(t, f)
		if out.OIDC == nil || out.OIDC.TokenEndpoint != "" || !strings.Contains(out.OIDC.Problem, "unreachable") {
			t.Fatalf("auth-config with the issuer down: %+v", out.OIDC)
		}
		if !strings.Contains(csp, "connect-src 'self' http://127.0.0.1:1;") {
			t.Fatalf("the UI's CSP: %s", csp)
		}
	})
	t.Run("tokens only", func(t *testing.T) {
		out, csp := get(t, startSecured(t))
		if !out.Authentication || out.OIDC != nil || !strings.Contains(csp, "connect-src 'self';") {
			t.Fatalf("auth-config: %+v, CSP %s", out, csp)
		}
	})
	t.Run("no authentication", func(t *testing.T) {
		out, _ := get(t, startSecuredConfig(t, nil, func(c *Config) { c.Auth = nil }))
		if out.Authentication || out.OIDC != nil {
			t.Fatalf("auth-config: %+v", out)
		}
	})
}
