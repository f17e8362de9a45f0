package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// binary is the peloton binary built once for the whole package.
var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// server is a running `peloton dev`.
type server struct {
	t       testing.TB
	addr    string
	dataDir string
	cmd     *exec.Cmd
	log     *bytes.Buffer
	done    chan error
}

// startDev starts `peloton dev` on dataDir with extra flags and waits until
// it is healthy.
func startDev(t testing.TB, dataDir string, extra ...string) *server {
	t.Helper()
	addr := testkit.FreeAddr(t)
	return startPeloton(t, dataDir, addr, append([]string{"dev", "--data-dir", dataDir, "--addr", addr}, extra...)...)
}

// startPeloton runs the binary with args, a server that listens on addr
// and keeps its files in dataDir, and waits until it is healthy.
func startPeloton(t testing.TB, dataDir, addr string, args ...string) *server {
	t.Helper()
	openToTasks(t, dataDir)
	s := &server{t: t, addr: addr, dataDir: dataDir, log: &bytes.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	// Runs outlive the server (a restart adopts them); once the test and
	// its server are done, nothing may still write in the data directory.
	t.Cleanup(func() { testkit.KillUnder(t, dataDir) })
	t.Cleanup(func() { s.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		select {
		case err := <-s.done:
			t.Fatalf("peloton %s exited early: %v\n%s", args[0], err, s.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("peloton %s not healthy after 30s\n%s", args[0], s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openToTasks lets the users local tasks run as (root's dev server runs
// each as a uid of its own) search the directories above dataDir, which
// t.TempDir makes 0700: the server opens the path from its data
// directory down to each sandbox, but not above it.
func openToTasks(t testing.TB, dataDir string) {
	t.Helper()
	root := filepath.Clean(os.TempDir())
	for d := filepath.Dir(filepath.Clean(dataDir)); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil {
			continue
		}
		if err := os.Chmod(d, info.Mode().Perm()|0o011); err != nil {
			t.Fatal(err)
		}
	}
}

// stop interrupts the server as Ctrl-C would and waits for a clean exit.
func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("peloton %s did not stop cleanly: %v\n%s", s.cmd.Args[1], err, s.log)
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("peloton %s did not stop within 20s\n%s", s.cmd.Args[1], s.log)
	}
}

// result is what a CLI run produced.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the peloton CLI against the server.
func (s *server) cli(args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "PELOTON_ADDR="+s.addr)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("running peloton %v: %v", args, err)
	}
	return r
}

// mustCLI runs the CLI and fails the test on a non-zero exit.
func (s *server) mustCLI(args ...string) string {
	s.t.Helper()
	r := s.cli(args...)
	if r.code != 0 {
		s.t.Fatalf("peloton %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// http does an HTTP request against the gateway and returns status and body.
func (s *server) http(method, path string, body io.Reader) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// repoFile returns the path of a file relative to the repository root.
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}
