// Package testkit is what the end-to-end test packages share: building the
// real peloton binary once, polling for a condition with a deadline, free
// loopback ports, the tail of a process log, a Kubernetes test control
// plane (kube.go).
package testkit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// BuildPeloton builds the peloton binary into a temporary directory and
// returns its path and a function that removes it.
func BuildPeloton() (string, func(), error) {
	dir, err := os.MkdirTemp("", "peloton-test-bin")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "peloton")
	build := exec.Command("go", "build", "-o", bin, "github.com/peloton-federated/peloton/cmd/peloton")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building peloton: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// Main builds the binary into *bin, runs the package's tests and exits.
// Their HTTP requests to a dev cluster carry its token (DevTransport).
func Main(m *testing.M, bin *string) {
	path, cleanup, err := BuildPeloton()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	UseDevTokens()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// WaitFor polls cond every 100ms until it holds, failing the test after d;
// it returns how long it waited.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// FreePort returns a port free on ip at the time of the call.
func FreePort(t testing.TB, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeAddr returns a free 127.0.0.1 address.
func FreeAddr(t testing.TB) string {
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t, "127.0.0.1"))
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogBuffer is a process's output, read by the test while the process
// writes it.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
