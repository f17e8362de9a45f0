package main

import (
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// securityConfig is the part of a server config that secures it.
type securityConfig struct {
	// TLS serves the API port over TLS with the region's certificate;
	// with a CA, client certificates of that CA authenticate users and
	// other regions, and calls to other regions are mutual TLS.
	TLS *struct {
		Cert string `json:"cert"`
		Key  string `json:"key"`
		CA   string `json:"ca"`
	} `json:"tls"`
	// Auth turns authentication and authorisation on.
	Auth  *authConfig `json:"auth"`
	Audit struct {
		Retention duration `json:"retention"`
	} `json:"audit"`
}

// authConfig is the auth section of a server config.
type authConfig struct {
	// Tokens is a token file (names and SHA-256 of bearer tokens).
	Tokens string `json:"tokens"`
	// Policy is the role bindings file.
	Policy string `json:"policy"`
	// PolicySource is where the policy in force comes from: "file"
	// (the default: Policy, read again when it changes) or "store"
	// (set by admins through the API and kept in the region's store;
	// Policy, when given, is in force until one is set).
	PolicySource string `json:"policySource"`
	// OIDC accepts ID tokens of an issuer as bearer tokens.
	OIDC *struct {
		Issuer         string `json:"issuer"`
		Audience       string `json:"audience"`
		UsernameClaim  string `json:"usernameClaim"`
		UsernamePrefix string `json:"usernamePrefix"`
		// ClientID is the client the web UI signs in as with the
		// issuer (authorization code with PKCE, no secret); default
		// audience.
		ClientID string `json:"clientId"`
		// Scopes asked for at the web UI's sign-in (default openid,
		// email, profile).
		Scopes []string `json:"scopes"`
	} `json:"oidc"`
}

// checkSecurity checks the security sections, naming the field of every
// problem.
func checkSecurity(c *serverConfig, add func(field, msg string)) {
	if c.TLS != nil {
		checkTLS(c, add)
	}
	if c.Auth != nil {
		checkAuth(c, add)
	}
	if c.Audit.Retention != 0 && c.Audit.Retention < duration(time.Hour) {
		add("audit.retention", "must be at least 1h")
	}
}

// checkTLS checks the tls section: the files given and the certificate
// being this region's; gossip must then be encrypted too.
func checkTLS(c *serverConfig, add func(field, msg string)) {
	t := c.TLS
	if t.Cert == "" {
		add("tls.cert", "is required (the region's certificate, PEM)")
	}
	if t.Key == "" {
		add("tls.key", "is required (the certificate's private key, PEM)")
	}
	if t.CA == "" {
		add("tls.ca", "is required (the CA of client and region certificates, PEM)")
	}
	if t.Cert != "" && t.Key != "" {
		checkRegionCert(c, add)
	}
	if c.Gossip != nil && c.Gossip.EncryptKey == "" {
		add("gossip.encryptKey", "is required with tls: regions talk mutual TLS and gossip is encrypted (make one with: head -c 32 /dev/urandom | base64)")
	}
}

// checkRegionCert checks that tls.cert is a region certificate, of this
// region.
func checkRegionCert(c *serverConfig, add func(field, msg string)) {
	region, err := auth.RegionOfCertFile(c.TLS.Cert, c.TLS.Key)
	switch {
	case err != nil:
		add("tls.cert", err.Error())
	case region == "":
		add("tls.cert", "is not a region certificate (OU "+auth.RegionUnit+"): `peloton tls init` makes them")
	case c.Region != "" && region != c.Region:
		add("tls.cert", fmt.Sprintf("is the certificate of region %q, not of %q", region, c.Region))
	}
}

// checkAuth checks the auth section: some way to sign in, and a policy.
func checkAuth(c *serverConfig, add func(field, msg string)) {
	a := c.Auth
	if a.Tokens == "" && (c.TLS == nil || c.TLS.CA == "") && a.OIDC == nil {
		add("auth", "needs tokens, oidc, or tls.ca for client certificates: nobody could sign in")
	}
	if a.OIDC != nil {
		checkOIDC(a, add)
	}
	switch a.PolicySource {
	case "", policyFromFile:
		if a.Policy == "" {
			add("auth.policy", "is required (who may do what), unless auth.policySource is store")
		}
	case policyFromStore:
	default:
		add("auth.policySource", fmt.Sprintf("must be %s or %s, not %q", policyFromFile, policyFromStore, a.PolicySource))
	}
}

// checkOIDC checks auth.oidc: an issuer reached safely, and an audience.
func checkOIDC(a *authConfig, add func(field, msg string)) {
	o := a.OIDC
	u, err := url.Parse(o.Issuer)
	switch {
	case o.Issuer == "" || err != nil || u.Host == "":
		add("auth.oidc.issuer", "is required: the issuer URL, such as https://accounts.example.com")
	case u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Host)):
		add("auth.oidc.issuer", "must be https (http only on loopback)")
	}
	if o.Audience == "" {
		add("auth.oidc.audience", "is required: the client ID the ID tokens are issued for")
	}
	for _, sc := range o.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\n\"\\") {
			add("auth.oidc.scopes", fmt.Sprintf("%q is not a scope (one word each)", sc))
		}
	}
}

// exposed says why a server config must not run as is: an address off
// loopback without TLS and authentication (or gossip without encryption).
// "" when it may.
func exposed(c *serverConfig) string {
	var open []string
	if !isLoopback(c.Addr) && (c.TLS == nil || c.Auth == nil) {
		open = append(open, "the API on "+c.Addr+" without TLS and authentication")
	}
	if g := c.Gossip; g != nil && g.EncryptKey == "" && !isLoopback(g.Bind) {
		open = append(open, "gossip on "+g.Bind+" without encryption")
	}
	if len(open) == 0 {
		return ""
	}
	return "refusing to serve " + strings.Join(open, " and ") + ": set tls, auth and gossip.encryptKey (docs/security.md), or pass --insecure on a network you trust"
}

// isLoopback tells an address that only this machine reaches.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// security is what a secured server runs with.
type security struct {
	serverTLS *tls.Config
	dialCreds func(region string) credentials.TransportCredentials
	// admission admits gossip members holding a region certificate of
	// the CA (nil without tls).
	admission gossip.Admission
	auth      *gateway.Auth
}

// loadSecurity reads the certificates, tokens and policy of a config.
func loadSecurity(c *serverConfig, log *slog.Logger) (*security, error) {
	s := &security{}
	if t := c.TLS; t != nil {
		var err error
		if s.serverTLS, err = auth.ServerTLS(t.Cert, t.Key, t.CA); err != nil {
			return nil, err
		}
		ca, err := auth.LoadCA(t.CA)
		if err != nil {
			return nil, fmt.Errorf("tls.ca: %w", err)
		}
		cert := s.serverTLS.Certificates[0]
		s.dialCreds = func(region string) credentials.TransportCredentials {
			return credentials.NewTLS(auth.RegionClientTLS(cert, ca, region))
		}
		signer, ok := cert.PrivateKey.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("tls.key: a %T cannot sign", cert.PrivateKey)
		}
		s.admission = federation.CertAdmission{Key: signer, TLS: func(region string) *tls.Config {
			return auth.RegionClientTLS(cert, ca, region)
		}}
	}
	if a := c.Auth; a != nil {
		reloaded := func(path string, err error) {
			if err != nil {
				log.Warn("kept the previous content of a changed file", "file", path, "err", err)
				return
			}
			log.Info("reloaded", "file", path)
		}
		authn := &auth.Authenticator{}
		if a.Tokens != "" {
			tokens, err := auth.LoadTokens(a.Tokens, reloaded)
			if err != nil {
				return nil, fmt.Errorf("auth.tokens: %w", err)
			}
			authn.Tokens = tokens
		}
		if o := a.OIDC; o != nil {
			var err error
			authn.OIDC, err = auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: o.Issuer, Audience: o.Audience,
				UsernameClaim: o.UsernameClaim, UsernamePrefix: o.UsernamePrefix, ClientID: o.ClientID, Scopes: o.Scopes})
			if err != nil {
				return nil, fmt.Errorf("auth.oidc: %w", err)
			}
		}
		var policy *auth.Policies
		if a.Policy != "" {
			var err error
			if policy, err = auth.LoadPolicy(a.Policy, reloaded); err != nil {
				return nil, fmt.Errorf("auth.policy: %w", err)
			}
		}
		if a.PolicySource == policyFromStore {
			// The region's store is opened later: openRegion loads the
			// stored policy and gives the gateway the store.
			policy = auth.EditablePolicy(policy)
		}
		s.auth = &gateway.Auth{Authenticator: authn, Policy: policy}
	}
	return s, nil
}

// Where a server's policy comes from (auth.policySource).
const (
	policyFromFile  = "file"
	policyFromStore = "store"
)

// policyKey names the stored policy among the store's values.
const policyKey = "auth/policy"

// storedPolicies keeps the policy set through the API in the region's
// store.
type storedPolicies struct{ st store.RecordStore }

func (p storedPolicies) SavePolicy(ctx context.Context, sp *auth.StoredPolicy) error {
	raw, err := auth.EncodeStoredPolicy(sp)
	if err != nil {
		return err
	}
	return kinds.PutValue(ctx, p.st, policyKey, raw)
}

// load reads the stored policy; nil when none was set.
func (p storedPolicies) load(ctx context.Context) (*auth.StoredPolicy, error) {
	raw, err := kinds.GetValue(ctx, p.st, policyKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return auth.DecodeStoredPolicy(raw)
}

// watchPolicy reads the stored policy every interval until ctx ends, so a
// policy set at another member of the region (sharing the store) is in
// force here within interval.
func watchPolicy(ctx context.Context, p storedPolicies, policies *auth.Policies, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sp, err := p.load(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("cannot read the stored policy; keeping the one in force", "err", err)
			}
			continue
		}
		cur := policies.Stored()
		if sp != nil && (cur == nil || cur.YAML != sp.YAML || !cur.SetAt.Equal(sp.SetAt)) {
			policies.SetStored(sp)
			log.Info("policy changed in the store", "set_by", sp.SetBy, "set_at", sp.SetAt)
		}
	}
}

// callerName names a call's caller as the gateway authenticated it, for
// the shard's records (who promoted an update): "token:alice", "" when the
// call carries no identity.
func callerName(ctx context.Context) string {
	if id, ok := auth.FromContext(ctx); ok {
		return id.String()
	}
	return ""
}
