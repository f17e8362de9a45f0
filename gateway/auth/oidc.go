package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// ByOIDC is a caller authenticated by an OIDC ID token of the configured
// issuer.
const ByOIDC = "oidc"

// ErrBadIDToken: an ID token failed verification (signature, issuer,
// audience, expiry, or the username claim).
var ErrBadIDToken = errors.New("ID token refused")

// OIDCConfig names the issuer whose ID tokens authenticate callers.
type OIDCConfig struct {
	// Issuer is the issuer URL; its discovery document is at
	// Issuer/.well-known/openid-configuration.
	Issuer string
	// Audience is the client ID the tokens must be issued for.
	Audience string
	// UsernameClaim is the claim that names the caller (default "sub");
	// with "email", the token's email_verified must be true.
	UsernameClaim string
	// UsernamePrefix is put before the claim's value, so that names from
	// the issuer cannot be taken for token names ("oidc:" makes
	// "oidc:alice@example.com").
	UsernamePrefix string
	// ClientID is the client the web UI signs in as (authorization code
	// with PKCE, a public client: no secret); default Audience. The ID
	// tokens it gets must still be for Audience.
	ClientID string
	// Scopes are asked for at sign-in (default openid, email, profile);
	// openid is always among them.
	Scopes []string
}

// BrowserSignIn is what a browser needs to sign in with the issuer by
// the authorization code flow with PKCE, as a public client: nothing in
// it is secret.
type BrowserSignIn struct {
	Issuer   string
	ClientID string
	Scopes   []string
	// The issuer's endpoints, from its discovery document.
	AuthorizationEndpoint string
	TokenEndpoint         string
}

// How long discovery and key fetches may take, and how soon a failed
// discovery is tried again.
const (
	oidcTimeout    = 5 * time.Second
	oidcRediscover = 10 * time.Second
)

// OIDC verifies ID tokens of one issuer with go-oidc: the issuer's keys
// come from its discovery document's jwks_uri and are fetched again when
// a token names a key not seen yet. Discovery happens at the first token
// (and again, at most every 10 s, while it fails), so a server starts
// while its issuer is down.
type OIDC struct {
	cfg  OIDCConfig
	base context.Context // for key fetches, which outlive a call

	mu        sync.Mutex
	verifier  *oidc.IDTokenVerifier
	endpoints BrowserSignIn // filled in at discovery
	tried     time.Time
	err       error
}

// NewOIDC checks cfg; base is the context key fetches run in (its HTTP
// client may be set with oidc.ClientContext).
func NewOIDC(base context.Context, cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("issuer: required")
	}
	if cfg.Audience == "" {
		return nil, errors.New("audience: required (the client ID tokens are issued for)")
	}
	if cfg.UsernameClaim == "" {
		cfg.UsernameClaim = "sub"
	}
	if cfg.ClientID == "" {
		cfg.ClientID = cfg.Audience
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{"openid", "email", "profile"}
	} else if !slices.Contains(cfg.Scopes, "openid") {
		cfg.Scopes = append([]string{"openid"}, cfg.Scopes...)
	}
	return &OIDC{cfg: cfg, base: base}, nil
}

func (o *OIDC) verifierAt(now time.Time) (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, nil
	}
	if !o.tried.IsZero() && now.Sub(o.tried) < oidcRediscover {
		return nil, o.err
	}
	o.tried = now
	ctx, cancel := context.WithTimeout(o.base, oidcTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		o.err = fmt.Errorf("issuer %s unreachable: %w", o.cfg.Issuer, err)
		return nil, o.err
	}
	// The key set fetches with o.base, not with the discovery's context.
	o.verifier = p.VerifierContext(o.base, &oidc.Config{ClientID: o.cfg.Audience})
	ep := p.Endpoint()
	o.endpoints = BrowserSignIn{Issuer: o.cfg.Issuer, ClientID: o.cfg.ClientID, Scopes: o.cfg.Scopes,
		AuthorizationEndpoint: ep.AuthURL, TokenEndpoint: ep.TokenURL}
	return o.verifier, nil
}

// BrowserSignIn is how a browser signs in with the issuer, its endpoints
// discovered (now, when not yet). Without an authorization or a token
// endpoint in the discovery document the issuer offers no such sign-in.
func (o *OIDC) BrowserSignIn(now time.Time) (BrowserSignIn, error) {
	if _, err := o.verifierAt(now); err != nil {
		return BrowserSignIn{Issuer: o.cfg.Issuer, ClientID: o.cfg.ClientID, Scopes: o.cfg.Scopes}, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.endpoints
	out.Scopes = slices.Clone(out.Scopes)
	if out.AuthorizationEndpoint == "" || out.TokenEndpoint == "" {
		return out, fmt.Errorf("issuer %s names no authorization_endpoint or token_endpoint in its discovery document: it offers no sign-in by authorization code", o.cfg.Issuer)
	}
	return out, nil
}

// Origins are the origins a browser signing in calls (the issuer's, and
// its token endpoint's once discovered), for the web UI's content
// security policy. It never waits for discovery.
func (o *OIDC) Origins() []string {
	o.mu.Lock()
	tokenURL := o.endpoints.TokenEndpoint
	o.mu.Unlock()
	var out []string
	for _, raw := range []string{o.cfg.Issuer, tokenURL} {
		if u, err := url.Parse(raw); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			if origin := u.Scheme + "://" + u.Host; !slices.Contains(out, origin) {
				out = append(out, origin)
			}
		}
	}
	return out
}

// Verify checks an ID token and returns its caller.
func (o *OIDC) Verify(now time.Time, raw string) (Identity, error) {
	v, err := o.verifierAt(now)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrBadIDToken, err)
	}
	ctx, cancel := context.WithTimeout(o.base, oidcTimeout)
	defer cancel()
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrBadIDToken, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("%w: claims: %v", ErrBadIDToken, err)
	}
	name, _ := claims[o.cfg.UsernameClaim].(string)
	if name == "" {
		return Identity{}, fmt.Errorf("%w: no %q claim", ErrBadIDToken, o.cfg.UsernameClaim)
	}
	if o.cfg.UsernameClaim == "email" {
		if verified, _ := claims["email_verified"].(bool); !verified {
			return Identity{}, fmt.Errorf("%w: email %s is not verified (email_verified)", ErrBadIDToken, name)
		}
	}
	return Identity{Name: o.cfg.UsernamePrefix + name, Method: ByOIDC}, nil
}

// looksLikeJWT tells an ID token (three base64url parts) from a token of
// the token file (one part).
func looksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }
