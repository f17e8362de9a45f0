// Package oidctest is an OpenID Connect issuer for tests: an HTTP server
// on loopback serving a discovery document and its JSON Web Key Set, and
// ID tokens signed with a key it made. It is for tests only.
package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Issuer is a running test issuer.
type Issuer struct {
	URL string

	mu   sync.Mutex
	key  *ecdsa.PrivateKey
	kid  int
	keys []jose.JSONWebKey // published
}

// New starts an issuer, stopped when the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{}
	is.Rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.URL,
			"jwks_uri":                              is.URL + "/keys",
			"authorization_endpoint":                is.URL + "/auth",
			"token_endpoint":                        is.URL + "/token",
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		set := jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), is.keys...)}
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// Rotate makes a new signing key and publishes it beside the old ones.
func (is *Issuer) Rotate() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.kid++
	is.key = key
	is.keys = append(is.keys, jose.JSONWebKey{Key: &key.PublicKey, KeyID: fmt.Sprintf("k%d", is.kid), Algorithm: string(jose.ES256), Use: "sig"})
}

// Token signs claims with the current key ("iss" defaults to the issuer).
func (is *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	is.mu.Lock()
	key, kid := is.key, fmt.Sprintf("k%d", is.kid)
	is.mu.Unlock()
	return Sign(t, key, kid, is.withIssuer(claims))
}

func (is *Issuer) withIssuer(claims map[string]any) map[string]any {
	out := map[string]any{"iss": is.URL}
	for k, v := range claims {
		out[k] = v
	}
	return out
}

// ForgedToken signs claims with a key the issuer never published.
func (is *Issuer) ForgedToken(t testing.TB, claims map[string]any) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return Sign(t, key, "k1", is.withIssuer(claims))
}

// Sign makes a compact JWS of claims with key.
func Sign(t testing.TB, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
