package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc"
)

// devUser is the name a dev cluster's token authenticates; the cluster's
// policy makes it admin.
const devUser = "dev"

// devAuth is how a dev cluster authenticates: loopback is no identity
// (browsers and every other user of the machine reach it), so it makes a
// token at start and refuses calls without it. Its regions, which share
// the process and have no certificates, call one another with a token of
// their own each, which never leaves the process.
type devAuth struct {
	token   string
	regions map[string]string // token by region
}

func newDevAuth(regions []string) (*devAuth, error) {
	d := &devAuth{regions: make(map[string]string, len(regions))}
	var err error
	if d.token, err = auth.NewToken(); err != nil {
		return nil, err
	}
	for _, r := range regions {
		if d.regions[r], err = auth.NewToken(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// gatewayAuth is the authentication and policy of every region's gateway.
func (d *devAuth) gatewayAuth() *gateway.Auth {
	byRegion := make(map[string]string, len(d.regions))
	for r, t := range d.regions {
		byRegion[t] = r
	}
	policy := &auth.Policy{Bindings: []auth.Binding{{Subjects: []string{devUser}, Role: auth.RoleAdmin}}}
	return &gateway.Auth{
		Authenticator: &auth.Authenticator{
			Tokens:       auth.FixedTokens(map[string]string{d.token: devUser}),
			RegionTokens: auth.FixedTokens(byRegion),
		},
		Policy: auth.StaticPolicy(policy),
	}
}

// dialOption makes region's calls to the other regions carry its token.
func (d *devAuth) dialOption(region string) grpc.DialOption {
	// No TLS: dev regions call one another on loopback inside one process.
	return grpc.WithPerRPCCredentials(auth.Bearer{Token: d.regions[region]})
}

// publish keeps the token in <dataDir>/token and where the clients of
// this machine's user find it for each address; the returned function
// removes what it wrote for the addresses.
func (d *devAuth) publish(dataDir string, addrs []string) (func(), error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	if err := cli.WritePrivate(filepath.Join(dataDir, "token"), d.token+"\n"); err != nil {
		return nil, fmt.Errorf("writing the token: %w", err)
	}
	var written []string
	cleanup := func() {
		for _, a := range written {
			_ = cli.RemoveDevToken(a, d.token)
		}
	}
	for _, a := range addrs {
		if _, err := cli.WriteDevToken(a, d.token); err != nil {
			cleanup()
			return nil, fmt.Errorf("keeping the token for clients of %s: %w", a, err)
		}
		written = append(written, a)
	}
	return cleanup, nil
}

// signInURL opens the web UI signed in: the token travels in the URL's
// fragment, which browsers do not send to the server; the UI keeps it for
// the tab and removes it from the address bar.
func (d *devAuth) signInURL(addr string) string {
	return "http://" + addr + "/ui/#token=" + d.token
}
