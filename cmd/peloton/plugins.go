package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/local"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// A host manager cluster is given on the command line as
//
//	KIND[:NAME][,KEY=VALUE...]
//
// for example "local", "sim:big,hosts=1000,cpu=32" or
// "k8s:east,kubeconfig=/etc/k8s/east.conf". NAME defaults to KIND and must
// be unique within the shard. Each kind registers itself in its own file.

// pluginSpec is one parsed --hosts value.
type pluginSpec struct {
	Kind, Name string
	params     map[string]string
	used       map[string]bool
}

// param returns a parameter's value and marks it known.
func (s *pluginSpec) param(key, def string) string {
	s.used[key] = true
	if v, ok := s.params[key]; ok {
		return v
	}
	return def
}

// intParam, floatParam and durationParam parse typed parameters.
func (s *pluginSpec) intParam(key string, def int) (int, error) {
	v := s.param(key, strconv.Itoa(def))
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--hosts %s: %s=%q: not a whole number", s.Name, key, v)
	}
	return n, nil
}

func (s *pluginSpec) floatParam(key string, def float64) (float64, error) {
	v := s.param(key, strconv.FormatFloat(def, 'g', -1, 64))
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("--hosts %s: %s=%q: not a number", s.Name, key, v)
	}
	return f, nil
}

func (s *pluginSpec) durationParam(key string, def time.Duration) (time.Duration, error) {
	v := s.param(key, def.String())
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("--hosts %s: %s=%q: not a duration like 30s", s.Name, key, v)
	}
	return d, nil
}

// portsParam parses host port ranges "FROM-TO[|FROM-TO...]"; a single
// port may stand alone. Nil when the parameter is not given.
func (s *pluginSpec) portsParam(key string) ([]model.PortRange, error) {
	v := s.param(key, "")
	if v == "" {
		return nil, nil
	}
	var out []model.PortRange
	for _, part := range strings.Split(v, "|") {
		from, to, isRange := strings.Cut(part, "-")
		if !isRange {
			to = from
		}
		f, errF := strconv.ParseUint(from, 10, 16)
		t, errT := strconv.ParseUint(to, 10, 16)
		if errF != nil || errT != nil {
			return nil, fmt.Errorf("--hosts %s: %s=%q: %q is not a port range like 31000-31999", s.Name, key, v, part)
		}
		out = append(out, model.PortRange{From: uint32(f), To: uint32(t)})
	}
	return out, nil
}

// unknown reports parameters no factory asked for.
func (s *pluginSpec) unknown() error {
	var bad []string
	for k := range s.params {
		if !s.used[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	known := make([]string, 0, len(s.used))
	for k := range s.used {
		known = append(known, k)
	}
	sort.Strings(known)
	return fmt.Errorf("--hosts %s: unknown parameter %s (known: %s)", s.Name, strings.Join(bad, ", "), strings.Join(known, ", "))
}

func parsePluginSpec(v string) (*pluginSpec, error) {
	parts := strings.Split(v, ",")
	head := strings.TrimSpace(parts[0])
	kind, name, _ := strings.Cut(head, ":")
	if name == "" {
		name = kind
	}
	if kind == "" {
		return nil, fmt.Errorf("--hosts %q: missing kind (one of %s)", v, strings.Join(pluginKindNames(), ", "))
	}
	s := &pluginSpec{Kind: kind, Name: name, params: map[string]string{}, used: map[string]bool{}}
	for _, p := range parts[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--hosts %q: %q is not KEY=VALUE", v, p)
		}
		s.params[k] = val
	}
	return s, nil
}

// pluginEnv is what factories may use.
type pluginEnv struct {
	DataDir string
	Logger  *slog.Logger
	Store   store.Store
	// Defaults from the older single-cluster flags.
	SimHosts    int
	SimCPU      float64
	SimMemMB    float64
	SimDuration time.Duration
	// Secured is a server with tls or auth: it refuses local hosts whose
	// tasks cannot be sandboxed unless AllowUnsandboxed.
	Secured          bool
	AllowUnsandboxed bool
}

// allowUnsandboxedFlag lets a secured server run local tasks as its own
// user when it cannot switch users.
const allowUnsandboxedFlag = "--allow-unsandboxed-local-tasks"

// errUnsandboxed is why a secured server refuses a local host that cannot
// sandbox its tasks.
var errUnsandboxed = errors.New("its tasks cannot be sandboxed (this server is not root and lacks CAP_SETUID), so they would run as the server's user and could read its keys, tokens and store: run the server as root, or start it with " +
	allowUnsandboxedFlag + " (config: allowUnsandboxedLocalTasks: true) to accept that")

// checkSandbox decides whether a local host that sandboxes its tasks or not
// may serve: a secured server refuses one that does not, unless allowed,
// and says so loudly when allowed.
func checkSandbox(name string, sandboxed bool, env pluginEnv) error {
	switch {
	case sandboxed || !env.Secured:
		return nil
	case !env.AllowUnsandboxed:
		return fmt.Errorf("--hosts %s: %w", name, errUnsandboxed)
	}
	if env.Logger != nil {
		env.Logger.Error("TASKS ARE NOT SANDBOXED: local host manager tasks run as this server's user and can read its keys, tokens and store ("+allowUnsandboxedFlag+")", "cluster", name)
	}
	return nil
}

// localConfig reads the parameters of a local host manager.
func localConfig(s *pluginSpec, env pluginEnv) (local.Config, error) {
	ports, err := s.portsParam("ports")
	if err != nil {
		return local.Config{}, err
	}
	cfg := local.Config{Cluster: s.Name, Dir: filepath.Join(env.DataDir, "hosts", s.Name), TraverseFrom: env.DataDir, Logger: env.Logger, Ports: ports}
	if v := s.param("uids", ""); v != "" {
		if cfg.UIDs, err = local.ParseUIDRange(v); err != nil {
			return local.Config{}, fmt.Errorf("--hosts %s: uids=%q: %w", s.Name, v, err)
		}
	}
	cfg.User = s.param("user", "")
	if _, ok := s.params["user"]; ok && (cfg.User == "" || strings.ContainsAny(cfg.User, " :/")) {
		return local.Config{}, fmt.Errorf("--hosts %s: user=%q: not a user name or number", s.Name, cfg.User)
	}
	return cfg, nil
}

type pluginFactory func(spec *pluginSpec, env pluginEnv) (hostmgr.Plugin, error)

type pluginKind struct {
	help    string
	factory pluginFactory
}

var pluginKinds = map[string]pluginKind{}

// registerPluginKind makes a kind available to --hosts.
func registerPluginKind(kind, help string, f pluginFactory) {
	pluginKinds[kind] = pluginKind{help: help, factory: f}
}

func pluginKindNames() []string {
	out := make([]string, 0, len(pluginKinds))
	for k := range pluginKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pluginHelp describes every kind for --help.
func pluginHelp() string {
	var b strings.Builder
	for _, k := range pluginKindNames() {
		fmt.Fprintf(&b, "  %-6s %s\n", k, pluginKinds[k].help)
	}
	return b.String()
}

// buildPlugins makes one plugin per --hosts value.
func buildPlugins(values []string, env pluginEnv) ([]hostmgr.Plugin, error) {
	var out []hostmgr.Plugin
	names := map[string]bool{}
	for _, v := range values {
		spec, err := parsePluginSpec(v)
		if err != nil {
			return nil, err
		}
		kind, ok := pluginKinds[spec.Kind]
		if !ok {
			return nil, fmt.Errorf("--hosts %q: unknown kind %q (one of %s)", v, spec.Kind, strings.Join(pluginKindNames(), ", "))
		}
		if names[spec.Name] {
			return nil, fmt.Errorf("--hosts %q: cluster name %q used twice", v, spec.Name)
		}
		names[spec.Name] = true
		p, err := kind.factory(spec, env)
		if err != nil {
			return nil, err
		}
		if err := spec.unknown(); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--hosts: at least one host manager cluster is needed")
	}
	return out, nil
}

func init() {
	registerPluginKind("local", "this machine; tasks run as real processes, sandboxed when root: ports=31000-32000|FROM-TO, uids=200000-265535 (a uid per run), user=NAME (every task as NAME instead)", func(s *pluginSpec, env pluginEnv) (hostmgr.Plugin, error) {
		cfg, err := localConfig(s, env)
		if err != nil {
			return nil, err
		}
		p, err := local.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("--hosts %s: %w", s.Name, err)
		}
		if err := checkSandbox(s.Name, p.Sandboxed(), env); err != nil {
			return nil, err
		}
		return p, nil
	})
	registerPluginKind("sim", "simulated hosts: hosts=N,cpu=C,mem=MiB,duration=D,zones=a|b|c", func(s *pluginSpec, env pluginEnv) (hostmgr.Plugin, error) {
		n, err := s.intParam("hosts", env.SimHosts)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, fmt.Errorf("--hosts %s: hosts must be > 0", s.Name)
		}
		cpu, err := s.floatParam("cpu", env.SimCPU)
		if err != nil {
			return nil, err
		}
		mem, err := s.floatParam("mem", env.SimMemMB)
		if err != nil {
			return nil, err
		}
		gpu, err := s.floatParam("gpu", 0)
		if err != nil {
			return nil, err
		}
		d, err := s.durationParam("duration", env.SimDuration)
		if err != nil {
			return nil, err
		}
		zones := strings.Split(s.param("zones", "a|b|c"), "|")
		return sim.New(sim.Config{
			Cluster:         s.Name,
			DefaultDuration: d,
			Generate: sim.Generator{
				Count:      n,
				NamePrefix: s.Name + "-",
				Shape:      model.ResourcesFromDecimal(cpu, mem, 100*1024, gpu), // cpu in decimal cores
				Labels:     map[string][]string{"zone": zones},
			},
		})
	})
}
