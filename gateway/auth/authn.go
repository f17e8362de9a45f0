package auth

import (
	"crypto/x509"
	"fmt"
	"time"
)

// Credentials are what a call presents.
type Credentials struct {
	// Authorization holds the values of the Authorization header.
	Authorization []string
	// Chains are the verified certificate chains of the TLS peer.
	Chains [][]*x509.Certificate
	// Caller holds the values of CallerKey.
	Caller []string
}

// Authenticator turns credentials into an identity.
type Authenticator struct {
	// Tokens are the bearer tokens known; nil accepts none.
	Tokens *Tokens
	// OIDC, when set, accepts ID tokens of its issuer as bearer tokens.
	OIDC *OIDC
	// RegionTokens, when set, are bearer tokens that identify a region by
	// name, as a region certificate does (with the same right to assert
	// the caller it forwards for). `peloton dev` runs several regions in
	// one process without TLS: they present a token made at start that
	// never leaves the process.
	RegionTokens *Tokens
}

// Authenticate returns who presented c. A certificate wins over a token;
// a region's certificate may carry the caller it forwards for. Without
// credentials the identity is AnonymousIdentity (Decide refuses it all
// but public calls).
func (a *Authenticator) Authenticate(now time.Time, c Credentials) (Identity, error) {
	if len(c.Chains) > 0 && len(c.Chains[0]) > 0 {
		id, err := IdentityOfCert(c.Chains[0][0])
		if err != nil {
			return Identity{}, err
		}
		if len(c.Caller) > 0 && !id.IsRegion() {
			return Identity{}, fmt.Errorf("%w (the certificate of %s is a user's)", ErrAssertion, id.Name)
		}
		return asserted(id, c.Caller)
	}
	if id, ok := a.region(now, c); ok {
		return asserted(id, c.Caller)
	}
	if len(c.Caller) > 0 {
		return Identity{}, ErrAssertion
	}
	if len(c.Authorization) == 0 {
		return AnonymousIdentity, nil
	}
	if len(c.Authorization) > 1 {
		return Identity{}, fmt.Errorf("%w: more than one Authorization header", ErrMalformed)
	}
	token, err := ParseBearer(c.Authorization[0])
	if err != nil {
		return Identity{}, err
	}
	if a.OIDC != nil && looksLikeJWT(token) {
		return a.OIDC.Verify(now, token)
	}
	if a.Tokens == nil {
		return Identity{}, ErrUnknownToken
	}
	name, err := a.Tokens.Lookup(now, token)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Name: name, Method: ByToken}, nil
}

// region returns the region a RegionTokens bearer token names.
func (a *Authenticator) region(now time.Time, c Credentials) (Identity, bool) {
	if a.RegionTokens == nil || len(c.Authorization) != 1 {
		return Identity{}, false
	}
	token, err := ParseBearer(c.Authorization[0])
	if err != nil {
		return Identity{}, false
	}
	name, err := a.RegionTokens.Lookup(now, token)
	if err != nil {
		return Identity{}, false
	}
	return Identity{Name: name, Method: ByRegion}, true
}

// asserted is the identity a call of id runs as: the caller id forwards
// for, when it asserts one (id is then a region), else id itself.
func asserted(id Identity, caller []string) (Identity, error) {
	if len(caller) == 0 {
		return id, nil
	}
	forwarded, err := DecodeIdentity(caller[0])
	if err != nil {
		return Identity{}, err
	}
	forwarded.ForwardedBy = id.Name
	return forwarded, nil
}
