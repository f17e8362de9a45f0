package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// How a caller was authenticated.
const (
	ByToken       = "token"
	ByCertificate = "certificate"
	// ByRegion is a region's own identity: its certificate, with no caller
	// asserted (the global pass, replicas, relocation).
	ByRegion = "region"
	// Anonymous is a caller without credentials.
	Anonymous = "anonymous"
)

// Metadata keys.
const (
	// CallerKey carries the identity of the caller a region forwards for;
	// it is believed only from a peer holding a region certificate.
	CallerKey = "peloton-caller"
	// AuthorizationKey is the bearer token's header.
	AuthorizationKey = "authorization"
)

// Sentinel errors of authentication; their messages are the one-line
// reasons callers see.
var (
	ErrNoCredentials = errors.New("no credentials: send a bearer token (Authorization: Bearer <token>) or a client certificate")
	ErrMalformed     = errors.New("malformed bearer token")
	ErrUnknownToken  = errors.New("unknown bearer token")
	ErrAssertion     = errors.New("only a region may assert " + CallerKey)
)

// Identity is who makes a call.
type Identity struct {
	// Name is a token's name, a certificate's common name or a region's
	// name.
	Name string
	// Method is ByToken, ByCertificate, ByOIDC, ByRegion or Anonymous.
	Method string
	// ForwardedBy is the region that forwarded the call on the caller's
	// behalf ("" when it came straight from the caller).
	ForwardedBy string
}

// AnonymousIdentity is a caller without credentials.
var AnonymousIdentity = Identity{Name: "anonymous", Method: Anonymous}

// IsRegion tells a region's own identity.
func (id Identity) IsRegion() bool { return id.Method == ByRegion }

func (id Identity) String() string {
	s := id.Method + ":" + id.Name
	if id.ForwardedBy != "" {
		s += " (forwarded by region " + id.ForwardedBy + ")"
	}
	return s
}

// Encode is the identity as CallerKey carries it: "<method>:<name>", the
// name escaped.
func (id Identity) Encode() string { return id.Method + ":" + url.PathEscape(id.Name) }

// DecodeIdentity reads an identity encoded by Encode.
func DecodeIdentity(s string) (Identity, error) {
	method, name, ok := strings.Cut(s, ":")
	if !ok {
		return Identity{}, fmt.Errorf("%s %q: want <method>:<name>", CallerKey, s)
	}
	switch method {
	case ByToken, ByCertificate, ByRegion, ByOIDC:
	default:
		return Identity{}, fmt.Errorf("%s %q: unknown method %q", CallerKey, s, method)
	}
	n, err := url.PathUnescape(name)
	if err != nil || n == "" {
		return Identity{}, fmt.Errorf("%s %q: bad name", CallerKey, s)
	}
	return Identity{Name: n, Method: method}, nil
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity WithIdentity put in ctx.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}
