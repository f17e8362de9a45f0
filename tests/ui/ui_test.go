// Package ui_test drives the web UI in a real browser: headless Chromium
// (Debian's chromium package) through playwright-core (ui/node_modules,
// from `npm ci` in ui/), against `peloton dev --regions 3` on simulated
// hosts. Each scenario of ui/tests/browser.mjs is a subtest; screenshots
// go to the subtest's artifact directory (kept with `go test -artifacts`).
// Without node, the browser or ui/node_modules the test fails under `make
// test` (tests/env.sh installs them) and is skipped, and said to be, under
// a plain go test.
package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// Scenarios in order: pools gives "/" children, after which jobs go to a
// leaf pool, so it comes after the scenarios that create jobs in "/";
// migrations comes early, while the small cluster it moves a job to is
// free.
var scenarios = []string{"devlink", "pages", "migrations", "ids", "job-detail", "task-detail", "hosts", "rough", "job-live", "pending", "drain", "actions", "drill", "isolated", "pools", "big"}

func TestBrowser(t *testing.T) {
	uiDir := repoPath(t, "ui")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node", "Debian: apt-get install nodejs npm")
	}
	if _, err := os.Stat(filepath.Join(uiDir, "node_modules", "playwright-core")); err != nil {
		testenv.Missing(t, "playwright-core in ui/node_modules", "npm ci in ui/; tests/env.sh setup does it")
	}
	browser := chromiumPath(t)

	// The dev cluster picks its gossip ports itself; another process may
	// take one first, so a start that fails is tried again.
	var url string
	for attempt := 1; ; attempt++ {
		var err error
		url, err = startDev(t)
		if err == nil {
			break
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("peloton dev did not start (%v); again", err)
	}

	token := strings.TrimPrefix(testkit.DevHeader(strings.TrimPrefix(url, "http://")), "Bearer ")
	if token == "" {
		t.Fatal("peloton dev kept no token for its clients")
	}
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) { runScenario(t, node, uiDir, browser, url, sc, "DEV_TOKEN="+token) })
	}
}

// runScenario runs one scenario of ui/tests/browser.mjs against url.
func runScenario(t *testing.T, node, uiDir, browser, url, sc string, env ...string) {
	t.Helper()
	out := t.ArtifactDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, node, "tests/browser.mjs", sc)
	run.Dir = uiDir
	run.Env = append(append(os.Environ(), "PELOTON_URL="+url, "CHROMIUM="+browser, "OUT="+out), env...)
	outText, err := run.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(outText)), "\n") {
		t.Log(line)
	}
	if err != nil {
		t.Fatalf("scenario %s: %v", sc, err)
	}
}

// The sign-in scenario runs against a `peloton server` with
// authentication (tokens and a policy; plain HTTP on loopback): a viewer
// and an admin sign in with their tokens.
func TestBrowserSignIn(t *testing.T) {
	uiDir := repoPath(t, "ui")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node", "Debian: apt-get install nodejs npm")
	}
	if _, err := os.Stat(filepath.Join(uiDir, "node_modules", "playwright-core")); err != nil {
		testenv.Missing(t, "playwright-core in ui/node_modules", "npm ci in ui/; tests/env.sh setup does it")
	}
	browser := chromiumPath(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.yaml")
	tok := map[string]string{}
	for _, name := range []string{"root", "viewer"} {
		out, err := exec.Command(binary, "auth", "token", "create", name, "--file", tokens).CombinedOutput()
		if err != nil {
			t.Fatalf("token for %s: %v\n%s", name, err, out)
		}
		tok[name] = strings.TrimSpace(string(out))
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("bindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [viewer], role: viewer}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t, "127.0.0.1"))
	cfg := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`region: east
addr: %s
dataDir: %s
hosts: ["sim,hosts=5,duration=1h"]
auth: {tokens: %s, policy: %s}
`, addr, filepath.Join(dir, "data"), tokens, policy)), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(binary, "server", "--config", cfg)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("peloton server log (last lines):\n%s", testkit.LastLines(log.String(), 40))
		}
	})
	url := "http://" + addr
	testkit.WaitFor(t, 30*time.Second, "the server to be healthy", func() bool {
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	runScenario(t, node, uiDir, browser, url, "signin", "ADMIN_TOKEN="+tok["root"], "VIEWER_TOKEN="+tok["viewer"])
}

// startDev starts `peloton dev --regions 3` on sim hosts, stopped when the
// test ends, and returns the URL of its first region (east) once every
// region is alive. Each region has two clusters: sim (5 hosts) and a small
// one, spare (2 hosts of 2 cpu), that the migrations scenario moves to.
func startDev(t *testing.T) (string, error) {
	addr := threeFreePorts(t)
	var log bytes.Buffer
	cmd := exec.Command(binary, "dev", "--data-dir", t.TempDir(), "--addr", addr, "--regions", "3",
		"--hosts", "sim,hosts=5,duration=1h", "--hosts", "sim:spare,hosts=2,cpu=2,mem=1024,duration=1h", "--suspect-after", "1s", "--fail-after", "3s", "--recover-after", "2s",
		// History sampled every second, so the pools scenario sees it grow.
		"--history-interval", "1s")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	url := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for !allAlive(url) {
		select {
		case err := <-done:
			return "", fmt.Errorf("peloton dev exited: %v\n%s", err, testkit.LastLines(log.String(), 5))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("three regions not alive after 60s\n%s", testkit.LastLines(log.String(), 20))
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("peloton dev log (last lines):\n%s", testkit.LastLines(log.String(), 60))
		}
	})
	return url, nil
}

func allAlive(url string) bool {
	resp, err := http.Get(url + "/v1/regions")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode == 200 && strings.Count(buf.String(), `"health":"alive"`) == 3
}

// chromiumPath finds Debian's chromium (or the one CHROMIUM names).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "chromium", "Debian: apt-get install chromium, or set CHROMIUM")
	return ""
}

// threeFreePorts returns an address whose port and the next two are free:
// region i of `peloton dev --regions 3` listens on the port + i.
func threeFreePorts(t *testing.T) string {
	t.Helper()
	for range 50 {
		port := testkit.FreePort(t, "127.0.0.1")
		if port > 65530 {
			continue
		}
		ok := true
		for i := 1; i <= 2 && ok; i++ {
			ok = portFree(port + i)
		}
		if ok {
			return "127.0.0.1:" + strconv.Itoa(port)
		}
	}
	t.Fatal("no three consecutive free ports")
	return ""
}

func portFree(port int) bool {
	c, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// repoPath is a path in the repository, from this file's place in it.
func repoPath(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find the repository")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", rel)
}
