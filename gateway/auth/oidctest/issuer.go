// Package oidctest is an OpenID Connect issuer for tests: an HTTP server
// on loopback serving a discovery document and its JSON Web Key Set, and
// ID tokens signed with a key it made. It also signs a user in by the
// authorization code flow with PKCE (S256), as a browser does: its
// authorization endpoint sends the browser back with a code at once (no
// login page: the user is the one SetUser gave), and its token endpoint
// gives the ID token for the code to whoever proves, with the code
// verifier, to have asked for it (with CORS headers, so that a page of
// another origin may call it). It is for tests only.
package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Issuer is a running test issuer.
type Issuer struct {
	URL string

	mu   sync.Mutex
	key  *ecdsa.PrivateKey
	kid  int
	keys []jose.JSONWebKey // published

	user    map[string]any      // who signs in at the authorization endpoint; nil: nobody
	clients map[string][]string // client ID: its redirect URIs
	codes   map[string]grant    // codes given and not yet redeemed
}

// grant is what a code was given for.
type grant struct {
	clientID, redirectURI, challenge, nonce string
	claims                                  map[string]any
	expires                                 time.Time
}

// codeTTL is how long a code may be redeemed, as issuers allow (RFC
// 6749 recommends at most 10 minutes).
const codeTTL = time.Minute

// New starts an issuer, stopped when the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{clients: map[string][]string{}, codes: map[string]grant{}}
	is.Rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.URL,
			"jwks_uri":                              is.URL + "/keys",
			"authorization_endpoint":                is.URL + "/auth",
			"token_endpoint":                        is.URL + "/token",
			"response_types_supported":              []string{"code", "id_token"},
			"grant_types_supported":                 []string{"authorization_code"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported":                      []string{"openid", "email", "profile"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /auth", is.authorize)
	mux.HandleFunc("POST /token", is.token)
	mux.HandleFunc("OPTIONS /token", is.token)
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
	out, err := sign(key, kid, claims)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sign(key *ecdsa.PrivateKey, kid string, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

// SetUser makes claims the user who signs in at the authorization
// endpoint: the ID tokens it gets carry them (with iss, aud, iat, exp
// and nonce set by the issuer); "sub" is required. nil: every sign-in is
// refused (access_denied), as when a user declines.
func (is *Issuer) SetUser(claims map[string]any) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if claims == nil {
		is.user = nil
		return
	}
	if s, _ := claims["sub"].(string); s == "" {
		panic("oidctest: a user needs a sub claim")
	}
	is.user = cloneClaims(claims)
}

// AllowClient registers a public client (no secret) and the redirect
// URIs it may have codes sent to.
func (is *Issuer) AllowClient(id string, redirectURIs ...string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.clients[id] = append(is.clients[id], redirectURIs...)
}

func cloneClaims(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// authorize is the authorization endpoint (OpenID Connect Core 3.1.2):
// a request of an unknown client, or to a redirect URI it did not
// register, is answered here (400) since it may not be sent anywhere;
// every other answer goes to the redirect URI, with the state: a code,
// or an error (RFC 6749 4.1.2.1).
func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	is.mu.Lock()
	registered := slices.Contains(is.clients[clientID], redirectURI)
	user := is.user
	is.mu.Unlock()
	if !registered {
		http.Error(w, fmt.Sprintf("client %q with redirect_uri %q is not registered here", clientID, redirectURI), http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		params.Set("state", q.Get("state"))
		params.Set("iss", is.URL)
		sep := "?"
		if strings.Contains(redirectURI, "?") {
			sep = "&"
		}
		http.Redirect(w, r, redirectURI+sep+params.Encode(), http.StatusFound)
	}
	fail := func(code, desc string) { back(url.Values{"error": {code}, "error_description": {desc}}) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only response_type=code")
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		fail("invalid_scope", "the scope must hold openid")
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		fail("invalid_request", "PKCE is required: code_challenge (43 characters) with code_challenge_method=S256")
	case user == nil:
		fail("access_denied", "the user declined to sign in")
	default:
		code := randomString(32)
		is.mu.Lock()
		is.codes[code] = grant{clientID: clientID, redirectURI: redirectURI, challenge: q.Get("code_challenge"),
			nonce: q.Get("nonce"), claims: user, expires: time.Now().Add(codeTTL)}
		is.mu.Unlock()
		back(url.Values{"code": {code}})
	}
}

// token is the token endpoint (RFC 6749 4.1.3, RFC 7636 4.6): it
// redeems a code once, for the client and redirect URI it was given to,
// when the code verifier's SHA-256 is the challenge. Browsers call it
// from the page of another origin: it answers with CORS headers.
func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "POST")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Accept")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	refuse := func(status int, code, desc string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		refuse(http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "authorization_code" {
		refuse(http.StatusBadRequest, "unsupported_grant_type", "only authorization_code")
		return
	}
	is.mu.Lock()
	g, ok := is.codes[f.Get("code")]
	// A code is good for one try, whatever its outcome.
	delete(is.codes, f.Get("code"))
	is.mu.Unlock()
	switch {
	case !ok || time.Now().After(g.expires):
		refuse(http.StatusBadRequest, "invalid_grant", "unknown, used or expired code")
	case f.Get("client_id") != g.clientID:
		refuse(http.StatusBadRequest, "invalid_grant", "the code was given to another client")
	case f.Get("redirect_uri") != g.redirectURI:
		refuse(http.StatusBadRequest, "invalid_grant", "redirect_uri is not the one the code was sent to")
	case !VerifierMatches(f.Get("code_verifier"), g.challenge):
		refuse(http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge (PKCE)")
	default:
		now := time.Now()
		claims := cloneClaims(g.claims)
		claims["aud"] = g.clientID
		claims["iat"] = now.Unix()
		claims["exp"] = now.Add(10 * time.Minute).Unix()
		if g.nonce != "" {
			claims["nonce"] = g.nonce
		}
		is.mu.Lock()
		key, kid := is.key, fmt.Sprintf("k%d", is.kid)
		is.mu.Unlock()
		idToken, err := sign(key, kid, is.withIssuer(claims))
		if err != nil {
			refuse(http.StatusInternalServerError, "server_error", err.Error())
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": randomString(32), "token_type": "Bearer",
			"expires_in": 600, "id_token": idToken})
	}
}

// VerifierMatches tells whether a PKCE code verifier (RFC 7636 4.1: 43
// to 128 unreserved characters) is the one whose S256 challenge is
// challenge: BASE64URL(SHA-256(verifier)), without padding.
func VerifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, c := range verifier {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// Challenge is the S256 code challenge of a verifier.
func Challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
