package gateway

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/ui"
)

// The web UI asks, before anyone signs in, how one may: GET
// /ui/auth-config (ui.AuthConfigPath) answers without credentials, and
// says nothing secret. With auth.oidc configured it offers signing in
// with the issuer by the authorization code flow with PKCE, the UI being
// a public client (no client secret: the code verifier, made in the
// browser, proves that the one redeeming the code asked for it):
//
//	{"authentication": true,
//	 "oidc": {"issuer": "https://accounts.example.com", "clientId": "peloton",
//	          "scopes": ["openid", "email", "profile"], "redirectPath": "/ui/signin/oidc",
//	          "authorizationEndpoint": "...", "tokenEndpoint": "..."}}
//
// The endpoints come from the issuer's discovery document, read by the
// server; when it cannot be read, "problem" says why in their stead.
// Without OIDC there is no "oidc", and without authentication
// "authentication" is false.

// uiAuthConfig is the answer of GET /ui/auth-config.
type uiAuthConfig struct {
	Authentication bool        `json:"authentication"`
	OIDC           *uiOIDCInfo `json:"oidc,omitempty"`
}

type uiOIDCInfo struct {
	Issuer                string   `json:"issuer"`
	ClientID              string   `json:"clientId"`
	Scopes                []string `json:"scopes"`
	RedirectPath          string   `json:"redirectPath"`
	AuthorizationEndpoint string   `json:"authorizationEndpoint,omitempty"`
	TokenEndpoint         string   `json:"tokenEndpoint,omitempty"`
	Problem               string   `json:"problem,omitempty"`
}

// oidc is the OIDC issuer callers may authenticate with, or nil.
func (g *Gateway) oidc() *auth.OIDC {
	if a := g.cfg.Auth; a != nil && a.Authenticator != nil {
		return a.Authenticator.OIDC
	}
	return nil
}

func (g *Gateway) uiAuthConfig(w http.ResponseWriter, _ *http.Request) {
	out := uiAuthConfig{Authentication: g.cfg.Auth != nil}
	if o := g.oidc(); o != nil {
		si, err := o.BrowserSignIn(time.Now())
		out.OIDC = &uiOIDCInfo{Issuer: si.Issuer, ClientID: si.ClientID, Scopes: si.Scopes, RedirectPath: ui.OIDCRedirectPath,
			AuthorizationEndpoint: si.AuthorizationEndpoint, TokenEndpoint: si.TokenEndpoint}
		if err != nil {
			out.OIDC.AuthorizationEndpoint, out.OIDC.TokenEndpoint = "", ""
			out.OIDC.Problem = err.Error()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out)
}
