package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// A token file lists tokens by name and the hex SHA-256 of the token; the
// tokens themselves are never stored:
//
//	tokens:
//	  - name: alice
//	    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//
// `peloton auth token create NAME --file F` makes a token and adds it.

// tokenPrefix starts every token NewToken makes.
const tokenPrefix = "pel_"

// MaxTokenBytes bounds a bearer token; longer is malformed.
const MaxTokenBytes = 512

// reloadEvery is how often a token or policy file is checked for changes.
const reloadEvery = time.Second

type tokenFile struct {
	Tokens []tokenEntry `json:"tokens"`
}

type tokenEntry struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// NewToken returns a fresh token: 256 random bits.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is the hex SHA-256 of a token, as a token file keeps it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ParseBearer returns the token of an Authorization header value
// "Bearer <token>".
func ParseBearer(header string) (string, error) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", fmt.Errorf("%w: want \"Bearer <token>\"", ErrMalformed)
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", fmt.Errorf("%w: empty", ErrMalformed)
	}
	if len(token) > MaxTokenBytes {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxTokenBytes)
	}
	for _, r := range token {
		ok := r == '-' || r == '_' || r == '.' || r == '~' || r == '+' || r == '/' || r == '=' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return "", fmt.Errorf("%w: characters outside base64url", ErrMalformed)
		}
	}
	return token, nil
}

// parseTokenFile reads a token file's content: names by hash.
func parseTokenFile(raw []byte) (map[string]string, error) {
	var f tokenFile
	if err := strictYAML(raw, &f); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(f.Tokens))
	for i, t := range f.Tokens {
		field := fmt.Sprintf("tokens[%d]", i)
		if strings.TrimSpace(t.Name) == "" {
			return nil, fmt.Errorf("%s.name: is required", field)
		}
		h := strings.ToLower(t.SHA256)
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("%s.sha256: must be 64 hex digits (the SHA-256 of the token)", field)
		}
		if prev, dup := out[h]; dup {
			return nil, fmt.Errorf("%s: the same token as %q", field, prev)
		}
		out[h] = t.Name
	}
	return out, nil
}

// strictYAML decodes YAML into v, refusing unknown fields.
func strictYAML(raw []byte, v any) error {
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return fmt.Errorf("not valid YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// watchedFile is a file read again when its size or modification time
// changes, checked at most once per reloadEvery.
type watchedFile[T any] struct {
	path  string
	parse func([]byte) (T, error)
	// onReload reports every reload after the first load (err when the new
	// content was refused and the previous one kept).
	onReload func(path string, err error)

	mu      sync.Mutex
	value   T
	mod     time.Time
	size    int64
	checked time.Time
}

func loadWatched[T any](path string, parse func([]byte) (T, error)) (*watchedFile[T], error) {
	w := &watchedFile[T]{path: path, parse: parse}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if w.value, err = parse(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.mod, w.size = st.ModTime(), st.Size()
	return w, nil
}

// get returns the content as of now, reloading it when the file changed.
// A file that became unreadable or invalid keeps the previous content.
func (w *watchedFile[T]) get(now time.Time) T {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.path == "" || now.Sub(w.checked) < reloadEvery {
		return w.value
	}
	w.checked = now
	st, err := os.Stat(w.path)
	if err != nil || (st.ModTime().Equal(w.mod) && st.Size() == w.size) {
		return w.value
	}
	raw, err := os.ReadFile(w.path)
	var v T
	if err == nil {
		v, err = w.parse(raw)
	}
	if err == nil {
		w.value = v
		w.mod, w.size = st.ModTime(), st.Size()
	}
	if w.onReload != nil {
		w.onReload(w.path, err)
	}
	return w.value
}

// Tokens are the bearer tokens of a token file.
type Tokens struct {
	file *watchedFile[map[string]string]
}

// LoadTokens reads a token file; it is read again when it changes.
func LoadTokens(path string, onReload func(path string, err error)) (*Tokens, error) {
	w, err := loadWatched(path, parseTokenFile)
	if err != nil {
		return nil, err
	}
	w.onReload = onReload
	return &Tokens{file: w}, nil
}

// StaticTokens are tokens given in memory: names by token (tests).
func StaticTokens(byToken map[string]string) *Tokens {
	m := make(map[string]string, len(byToken))
	for tok, name := range byToken {
		m[HashToken(tok)] = name
	}
	return &Tokens{file: &watchedFile[map[string]string]{value: m}}
}

// Lookup returns the name of a token.
func (t *Tokens) Lookup(now time.Time, token string) (string, error) {
	name, ok := t.file.get(now)[HashToken(token)]
	if !ok {
		return "", ErrUnknownToken
	}
	return name, nil
}

// AddToken makes a token named name, adds its hash to the token file at
// path (created, mode 0600, when missing) and returns the token.
func AddToken(path, name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("a token needs a name")
	}
	var f tokenFile
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if _, err := parseTokenFile(raw); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if err := strictYAML(raw, &f); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	f.Tokens = append(f.Tokens, tokenEntry{Name: name, SHA256: HashToken(tok)})
	out, err := yaml.Marshal(f)
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return tok, nil
}

// Bearer sends Token with every gRPC call as `authorization: Bearer
// <token>`; RequireTLS refuses a connection without transport security
// (false only for loopback, where the client checked the address).
type Bearer struct {
	Token      string
	RequireTLS bool
}

func (b Bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{AuthorizationKey: "Bearer " + b.Token}, nil
}

func (b Bearer) RequireTransportSecurity() bool { return b.RequireTLS }
