package auth

import (
	"context"
	"errors"
	"fmt"
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

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	tried    time.Time
	err      error
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
	return o.verifier, nil
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
