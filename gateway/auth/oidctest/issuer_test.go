package oidctest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/gateway/auth/oidctest"
)

const redirect = "http://127.0.0.1:1/ui/signin/oidc"

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{
	Timeout:       5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// authorize asks the issuer's authorization endpoint for a code and
// returns the parameters it sends the browser back with.
func authorize(t *testing.T, is *oidctest.Issuer, over map[string]string) url.Values {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {"peloton"}, "redirect_uri": {redirect},
		"scope": {"openid email"}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {oidctest.Challenge(verifier)}, "code_challenge_method": {"S256"}}
	for k, v := range over {
		q.Set(k, v)
	}
	resp, err := noRedirects.Get(is.URL + "/auth?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("the authorization endpoint answered %s, want a redirect", resp.Status)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirect+"?") {
		t.Fatalf("redirected to %q, want %s", resp.Header.Get("Location"), redirect)
	}
	if loc.Query().Get("state") != q.Get("state") {
		t.Fatalf("the state came back as %q", loc.Query().Get("state"))
	}
	return loc.Query()
}

// redeem posts a code to the token endpoint as a browser does.
func redeem(t *testing.T, is *oidctest.Issuer, code, codeVerifier string) (int, map[string]any, http.Header) {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"client_id": {"peloton"}, "code_verifier": {codeVerifier}}
	req, _ := http.NewRequest("POST", is.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://127.0.0.1:1")
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out, resp.Header
}

// A verifier of 43 unreserved characters, as the web UI makes them.
const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

// The code flow with PKCE: the code is redeemed only with the verifier
// whose S256 challenge was sent, once; the ID token carries the nonce
// and verifies as the issuer's for the client.
func TestCodeFlowWithPKCE(t *testing.T) {
	is := oidctest.New(t)
	is.AllowClient("peloton", redirect)
	is.SetUser(map[string]any{"sub": "u-1", "email": "alice@example.com", "email_verified": true})

	// A wrong verifier is refused, and the code is spent.
	code := authorize(t, is, nil).Get("code")
	if code == "" {
		t.Fatal("no code")
	}
	wrong := strings.Repeat("x", 43)
	if status, out, _ := redeem(t, is, code, wrong); status != 400 || out["error"] != "invalid_grant" || !strings.Contains(out["error_description"].(string), "PKCE") {
		t.Fatalf("a wrong verifier: %d %v, want 400 invalid_grant naming PKCE", status, out)
	}
	if status, out, _ := redeem(t, is, code, verifier); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("the right verifier after a wrong one: %d %v, want the code spent", status, out)
	}

	// The right verifier gets an ID token, once.
	code = authorize(t, is, nil).Get("code")
	status, out, h := redeem(t, is, code, verifier)
	if status != 200 || h.Get("Access-Control-Allow-Origin") == "" {
		t.Fatalf("the right verifier: %d %v (CORS %q)", status, out, h.Get("Access-Control-Allow-Origin"))
	}
	if status, _, _ := redeem(t, is, code, verifier); status != 400 {
		t.Fatalf("a code redeemed twice: %d", status)
	}
	raw, _ := out["id_token"].(string)
	o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: is.URL, Audience: "peloton", UsernameClaim: "email"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := o.Verify(time.Now(), raw)
	if err != nil || id.Name != "alice@example.com" {
		t.Fatalf("the ID token: %+v, %v", id, err)
	}
	payload, _ := decodeSegment(strings.Split(raw, ".")[1])
	if payload["nonce"] != "n-1" {
		t.Fatalf("the ID token's nonce is %v, want n-1", payload["nonce"])
	}
	si, err := o.BrowserSignIn(time.Now())
	if err != nil || si.AuthorizationEndpoint != is.URL+"/auth" || si.TokenEndpoint != is.URL+"/token" || si.ClientID != "peloton" {
		t.Fatalf("the browser's sign-in: %+v, %v", si, err)
	}
}

func TestCodeFlowRefusals(t *testing.T) {
	is := oidctest.New(t)
	is.AllowClient("peloton", redirect)
	// No user: the sign-in is declined, back at the redirect URI.
	if q := authorize(t, is, nil); q.Get("error") != "access_denied" || q.Get("code") != "" {
		t.Fatalf("no user: %v, want access_denied", q)
	}
	is.SetUser(map[string]any{"sub": "u-1"})
	for _, c := range []struct {
		name string
		over map[string]string
		want string
	}{
		{"no PKCE", map[string]string{"code_challenge": "", "code_challenge_method": ""}, "invalid_request"},
		{"plain PKCE", map[string]string{"code_challenge_method": "plain"}, "invalid_request"},
		{"implicit", map[string]string{"response_type": "id_token"}, "unsupported_response_type"},
		{"no openid scope", map[string]string{"scope": "email"}, "invalid_scope"},
	} {
		if q := authorize(t, is, c.over); q.Get("error") != c.want {
			t.Errorf("%s: %v, want %s", c.name, q, c.want)
		}
	}
	// An unknown redirect URI is never redirected to.
	resp, err := noRedirects.Get(is.URL + "/auth?" + url.Values{"client_id": {"peloton"}, "redirect_uri": {"https://evil.example/"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("an unregistered redirect URI: %s, want 400", resp.Status)
	}
	// Verifiers too short, or of characters outside the unreserved set,
	// never match.
	for _, v := range []string{verifier[:42], verifier[:42] + "/", strings.Repeat("a", 129)} {
		if oidctest.VerifierMatches(v, oidctest.Challenge(v)) {
			t.Errorf("verifier %q accepted", v)
		}
	}
	if !oidctest.VerifierMatches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") {
		t.Error("RFC 7636 appendix B's verifier does not match its challenge")
	}
}

func decodeSegment(seg string) (map[string]any, error) {
	var out map[string]any
	data, err := base64URL(seg)
	if err != nil {
		return nil, err
	}
	return out, json.Unmarshal(data, &out)
}

func base64URL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
