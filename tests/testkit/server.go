package testkit

import (
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running peloton that serves a region's API on loopback:
// `peloton dev` (a region, or several with --regions, in one process) or
// `peloton server`; with its HTTP API (a dev cluster's token carried by
// http.DefaultClient, UseDevTokens) and its CLI.
type Server struct {
	*Process
	API
	// Addr is the API address of the (first) region.
	Addr    string
	DataDir string
	// Peloton is the CLI pointed at the cluster.
	Peloton CLI
}

// ServerOptions are the process's options (named "peloton dev" or
// "peloton server", stopped by SIGINT within 20 s and cleanly unless Stop
// says otherwise), how long it may take to answer /healthz (default 30 s)
// and how long a CLI run may take (default 2 min).
type ServerOptions struct {
	Options
	Healthy   time.Duration
	CLIWithin time.Duration
}

// StartDev starts `peloton dev` of bin on dataDir ("": a temporary
// directory) with args, on reserved loopback ports (the port and the ones
// after it that --regions takes), and waits until it is healthy.
func StartDev(t testing.TB, bin, dataDir string, args ...string) *Server {
	t.Helper()
	return StartDevWith(t, bin, ServerOptions{}, dataDir, args...)
}

// StartDevWith is StartDev with options.
func StartDevWith(t testing.TB, bin string, o ServerOptions, dataDir string, args ...string) *Server {
	t.Helper()
	if dataDir == "" {
		dataDir = filepath.Join(t.TempDir(), "data")
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePorts(t, "127.0.0.1", devRegions(args))))
	return StartPeloton(t, bin, o, addr, dataDir, append([]string{"dev", "--data-dir", dataDir, "--addr", addr}, args...)...)
}

// StartPeloton runs bin with args (`dev ...`, or `server --config ...`
// whose config says addr and dataDir): a server that listens on addr and
// keeps its files in dataDir. It waits until the server is healthy; its
// data directory is open to local tasks, and emptied of their processes
// once the test and the server are done. The process is named "peloton
// ARGS[0]" and stops cleanly on SIGINT within 20 s unless o says
// otherwise.
func StartPeloton(t testing.TB, bin string, o ServerOptions, addr, dataDir string, args ...string) *Server {
	t.Helper()
	if o.Name == "" && len(args) > 0 {
		o.Name = "peloton " + args[0]
	}
	if o.Stop == (Stopping{}) {
		o.Stop.Cleanly = true
	}
	if o.Healthy == 0 {
		o.Healthy = 30 * time.Second
	}
	OpenToTasks(t, dataDir)
	// Runs outlive the server (a restart adopts them); once the test and
	// its server are done, nothing may still write in the data directory.
	t.Cleanup(func() { KillUnder(t, dataDir) })
	d := &Server{
		Process: StartWith(t, exec.Command(bin, args...), o.Options),
		API:     API{T: t, URL: "http://" + addr},
		Addr:    addr, DataDir: dataDir,
		Peloton: CLI{Bin: bin, Addr: addr, Within: o.CLIWithin},
	}
	d.WaitHealthy(nil, d.URL, o.Healthy)
	return d
}

// CLI runs the CLI against the server; the test fails when it cannot
// run or does not end within its bound.
func (s *Server) CLI(args ...string) Result {
	s.T.Helper()
	r := s.Peloton.Run(args...)
	if r.Code == -1 {
		s.T.Fatalf("peloton %s: %s", strings.Join(args, " "), r.Stderr)
	}
	return r
}

// MustCLI runs the CLI against the server and returns its standard
// output; the test fails unless it exits 0.
func (s *Server) MustCLI(args ...string) string {
	s.T.Helper()
	r := s.Peloton.Run(args...)
	if r.Code != 0 {
		s.T.Fatalf("peloton %s: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

// devRegions is how many regions `peloton dev args` runs: --regions is a
// count or a list of names.
func devRegions(args []string) int {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--regions=")
		if !ok && (a == "--regions" || a == "-regions") && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return max(n, 1)
		}
		return len(strings.Split(v, ","))
	}
	return 1
}

// StartServerProcess starts `peloton server --config config` of bin,
// stopped as a service manager stops it (ServerStop) unless o.Stop says
// otherwise; its readiness and its calls are the caller's.
func StartServerProcess(t testing.TB, bin, config string, o Options) *Process {
	t.Helper()
	if o.Stop == (Stopping{}) {
		o.Stop = ServerStop
	}
	return StartWith(t, exec.Command(bin, "server", "--config", config), o)
}

// TaskList is the job's tasks as `peloton task list -o json` prints them.
func (s *Server) TaskList(job string) []Task {
	s.T.Helper()
	var out struct{ Tasks []Task }
	if raw := s.MustCLI("task", "list", job, "-o", "json"); json.Unmarshal([]byte(raw), &out) != nil {
		s.T.Fatalf("task list %s -o json: not a task list:\n%s", job, raw)
	}
	return out.Tasks
}
