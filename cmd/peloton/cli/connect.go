package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"sigs.k8s.io/yaml"

	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/shard/clock"
)

// Where the client connects, and as whom, comes from (first wins): the
// flags, the environment, the current context of the config file, the
// defaults.

// Environment variables of the connection settings.
const (
	envAddr    = "PELOTON_ADDR"
	envToken   = "PELOTON_TOKEN"
	envCA      = "PELOTON_CA"
	envCert    = "PELOTON_CERT"
	envKey     = "PELOTON_KEY"
	envContext = "PELOTON_CONTEXT"
	envConfig  = "PELOTON_CONFIG"
)

// clientContext is a named set of connection settings.
type clientContext struct {
	Name string `json:"name"`
	Addr string `json:"addr,omitempty"`
	// Token, or TokenFile holding it, is the bearer token to send.
	Token     string `json:"token,omitempty"`
	TokenFile string `json:"tokenFile,omitempty"`
	// CA verifies the server's certificate; Cert and Key are a client
	// certificate.
	CA   string `json:"ca,omitempty"`
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
}

// clientConfig is the client's config file.
type clientConfig struct {
	Current  string          `json:"current,omitempty"`
	Contexts []clientContext `json:"contexts"`
}

// configPath is the client's config file: $PELOTON_CONFIG, else
// peloton/config.yaml in the user's config directory.
func configPath() (string, error) {
	if p := os.Getenv(envConfig); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config file: set %s (%v)", envConfig, err)
	}
	return filepath.Join(dir, "peloton", "config.yaml"), nil
}

// loadClientConfig reads the config file; a missing one is empty.
func loadClientConfig() (*clientConfig, string, error) {
	path, err := configPath()
	if err != nil {
		return nil, "", err
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &clientConfig{}, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	var c clientConfig
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return nil, path, fmt.Errorf("%s: %w", path, err)
	}
	return &c, path, nil
}

func (c *clientConfig) find(name string) *clientContext {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			return &c.Contexts[i]
		}
	}
	return nil
}

func (c *clientConfig) save(path string) error {
	out, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// connection are the resolved settings of one command.
type connection struct {
	addr, token, ca, cert, key string
	// context names the config file's context used, if any.
	context string
	tls     bool
}

// resolve computes the connection settings of the running command.
func (a *app) resolve() (connection, error) {
	var conn connection
	flags := a.flags
	if flags == nil {
		flags = pflag.NewFlagSet("none", pflag.ContinueOnError)
	}
	pick := func(flag, env, fromContext, def string) string {
		if f := flags.Lookup(flag); f != nil && f.Changed {
			return f.Value.String()
		}
		if v := os.Getenv(env); v != "" {
			return v
		}
		if fromContext != "" {
			return fromContext
		}
		return def
	}
	var ctxEntry clientContext
	name := pick("context", envContext, "", "")
	cfg, path, err := loadClientConfig()
	if err != nil && name != "" {
		return conn, err
	}
	if cfg != nil {
		if name == "" {
			name = cfg.Current
		}
		if name != "" {
			e := cfg.find(name)
			if e == nil {
				return conn, fmt.Errorf("no context %q in %s (peloton context list)", name, path)
			}
			ctxEntry, conn.context = *e, name
		}
	}
	if ctxEntry.Token == "" && ctxEntry.TokenFile != "" {
		raw, err := os.ReadFile(ctxEntry.TokenFile)
		if err != nil {
			return conn, fmt.Errorf("context %s: token file: %w", name, err)
		}
		ctxEntry.Token = strings.TrimSpace(string(raw))
	}
	conn.addr = pick("addr", envAddr, ctxEntry.Addr, DefaultAddr)
	conn.token = pick("token", envToken, ctxEntry.Token, "")
	conn.ca = pick("ca", envCA, ctxEntry.CA, "")
	conn.cert = pick("cert", envCert, ctxEntry.Cert, "")
	conn.key = pick("key", envKey, ctxEntry.Key, "")
	lower := strings.ToLower(strings.TrimSpace(conn.addr))
	conn.tls = strings.HasPrefix(lower, "https://") || conn.ca != "" || conn.cert != ""
	return conn, nil
}

// dialOptions are the transport and per-call credentials of conn.
func (conn connection) dialOptions(target string) ([]grpc.DialOption, error) {
	var opts []grpc.DialOption
	if conn.tls {
		cfg, err := auth.ClientTLS(conn.ca, conn.cert, conn.key)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if conn.token == "" && !conn.tls && loopbackTarget(target) {
		// A dev cluster on this machine keeps its token where its user's
		// clients find it.
		token, err := FindDevToken(target)
		if err != nil {
			return nil, err
		}
		conn.token = token
	}
	if conn.token != "" {
		if !conn.tls && !loopbackTarget(target) {
			return nil, fmt.Errorf("refusing to send a token in the clear to %s: give --ca (or an https:// address)", target)
		}
		opts = append(opts, grpc.WithPerRPCCredentials(auth.Bearer{Token: conn.token, RequireTLS: conn.tls}))
	}
	return opts, nil
}

func loopbackTarget(target string) bool {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// contextCommand manages the config file's named contexts.
func (a *app) contextCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context",
		Short: "Named connection settings (address, CA, client certificate, token) in the config file",
		Long: `A context names where and as whom to connect, so that commands need no
--addr, --ca, --cert/--key or --token. The config file is $PELOTON_CONFIG,
else peloton/config.yaml in your config directory (~/.config). Flags and
the environment (PELOTON_ADDR, PELOTON_TOKEN, PELOTON_CA, PELOTON_CERT,
PELOTON_KEY, PELOTON_CONTEXT) win over the context.`,
	}
	var tokenFile string
	set := &cobra.Command{
		Use:   "set NAME [--addr A] [--ca F] [--cert F --key F] [--token-file F]",
		Short: "Create or change a context from the flags given (and make it current when it is the first)",
		Example: `  peloton context set prod-east --addr east.example:5390 --ca ca.crt --token-file ~/.peloton/east.token
  peloton context use prod-east`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			cfg, path, err := loadClientConfig()
			if err != nil {
				return err
			}
			e := cfg.find(argv[0])
			if e == nil {
				cfg.Contexts = append(cfg.Contexts, clientContext{Name: argv[0]})
				e = &cfg.Contexts[len(cfg.Contexts)-1]
			}
			flags := cmd.Flags()
			for flag, field := range map[string]*string{"addr": &e.Addr, "ca": &e.CA, "cert": &e.Cert, "key": &e.Key, "token": &e.Token} {
				if f := flags.Lookup(flag); f != nil && f.Changed {
					*field = f.Value.String()
				}
			}
			if tokenFile != "" {
				abs, err := filepath.Abs(tokenFile)
				if err != nil {
					return err
				}
				e.TokenFile, e.Token = abs, ""
			}
			for _, p := range []*string{&e.CA, &e.Cert, &e.Key} {
				if *p != "" {
					if abs, err := filepath.Abs(*p); err == nil {
						*p = abs
					}
				}
			}
			if cfg.Current == "" {
				cfg.Current = e.Name
			}
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "context %s saved in %s\n", e.Name, path)
			return nil
		},
	}
	set.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the bearer token (kept as a path, not copied)")
	use := &cobra.Command{
		Use:   "use NAME",
		Short: "Make a context the current one",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			cfg, path, err := loadClientConfig()
			if err != nil {
				return err
			}
			if cfg.find(argv[0]) == nil {
				return &exitError{code: ExitNotFound, msg: fmt.Sprintf("no context %q in %s (peloton context list)", argv[0], path)}
			}
			cfg.Current = argv[0]
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "using context %s\n", argv[0])
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the contexts; * marks the current one",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := loadClientConfig()
			if err != nil {
				return err
			}
			sort.Slice(cfg.Contexts, func(i, j int) bool { return cfg.Contexts[i].Name < cfg.Contexts[j].Name })
			w := newTable(cmd.OutOrStdout(), "CURRENT", "NAME", "ADDR", "TLS", "AUTH")
			for _, c := range cfg.Contexts {
				cur, tls, authn := "", "-", "-"
				if c.Name == cfg.Current {
					cur = "*"
				}
				if c.CA != "" || c.Cert != "" || strings.HasPrefix(c.Addr, "https://") {
					tls = "yes"
				}
				switch {
				case c.Cert != "":
					authn = "certificate"
				case c.Token != "" || c.TokenFile != "":
					authn = "token"
				}
				w.row(cur, c.Name, c.Addr, tls, authn)
			}
			return w.flush()
		},
	}
	cmd.AddCommand(set, use, list)
	return cmd
}

// Conn is a connection to a gateway made as the client commands make
// theirs, for the commands of cmd/peloton outside this package (such as
// `peloton store backup --server`).
type Conn struct {
	*grpc.ClientConn
	a *app
}

// Dial connects to the gateway at addr, or when addr is empty where
// --addr, PELOTON_ADDR or the current context say, with the TLS settings
// and credentials every client command finds: cmd's flags (--token, --ca,
// --cert/--key, --context), the environment, the current context, a dev
// cluster's token.
func Dial(cmd *cobra.Command, addr string) (*Conn, error) {
	a := &app{flags: cmd.Flags(), clock: clock.Real{}, pollInterval: 500 * time.Millisecond, rpcTimeout: 30 * time.Second, isTerminal: isTerminal}
	if addr != "" {
		if err := a.flags.Set("addr", addr); err != nil {
			return nil, &exitError{code: ExitError, msg: err.Error()}
		}
	}
	c, err := a.dial()
	if err != nil {
		return nil, err
	}
	return &Conn{ClientConn: c.conn, a: a}, nil
}

// Addr is the address dialed.
func (c *Conn) Addr() string { return c.a.addr }

// Explain turns an error of a call on c into the message and exit code
// the client commands give it (an unreachable server, missing
// credentials).
func (c *Conn) Explain(err error) error { return c.a.explain(err) }
