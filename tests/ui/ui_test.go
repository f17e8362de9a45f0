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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/gateway/auth/oidctest"
	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// Scenarios in order: pools gives "/" children, after which jobs go to a
// leaf pool, so it comes after the scenarios that create jobs in "/";
// migrations comes early, while the small cluster it moves a job to is
// free.
var scenarios = []string{"devlink", "pages", "migrations", "ids", "job-detail", "task-detail", "hosts", "rough", "job-live", "periodic", "pending", "drain", "actions", "drill", "isolated", "pools", "big"}

func TestBrowser(t *testing.T) {
	node, uiDir, browser := browserTools(t)
	url := startDev(t)
	token := strings.TrimPrefix(testkit.DevHeader(strings.TrimPrefix(url, "http://")), "Bearer ")
	if token == "" {
		t.Fatal("peloton dev kept no token for its clients")
	}
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) { runScenario(t, node, uiDir, browser, url, sc, "DEV_TOKEN="+token) })
	}
}

// browserTools finds node, the UI's directory with playwright-core in its
// node_modules, and the browser.
func browserTools(t *testing.T) (node, uiDir, browser string) {
	t.Helper()
	uiDir = testkit.RepoPath("ui")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node", "Debian: apt-get install nodejs npm")
	}
	if _, err := os.Stat(filepath.Join(uiDir, "node_modules", "playwright-core")); err != nil {
		testenv.Missing(t, "playwright-core in ui/node_modules", "npm ci in ui/; tests/env.sh setup does it")
	}
	return node, uiDir, chromiumPath(t)
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
	node, uiDir, browser := browserTools(t)
	dir := t.TempDir()
	lab := testkit.NewLab(t, binary, dir, testkit.LabSpec{Tokens: []string{"root", "viewer"},
		Policy: "bindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [viewer], role: viewer}\n"})
	url := startSecured(t, dir, lab.AuthConfig(""))
	runScenario(t, node, uiDir, browser, url, "signin", "ADMIN_TOKEN="+lab.Tokens["root"], "VIEWER_TOKEN="+lab.Tokens["viewer"])
}

// The OIDC scenario runs against a `peloton server` that takes the ID
// tokens of a test issuer (oidctest, in this process, on loopback), whose
// user alice signs in through the UI's button by the authorization code
// flow with PKCE.
func TestBrowserOIDC(t *testing.T) {
	node, uiDir, browser := browserTools(t)
	is := oidctest.New(t)
	is.SetUser(map[string]any{"sub": "u-alice", "email": "alice@example.com", "email_verified": true, "name": "Alice"})
	dir := t.TempDir()
	lab := testkit.NewLab(t, binary, dir, testkit.LabSpec{Tokens: []string{"root"},
		Policy: "bindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [\"oidc:alice@example.com\"], role: viewer}\n"})
	url := startSecured(t, dir, lab.AuthConfig(fmt.Sprintf(`oidc: {issuer: %q, audience: peloton-ui, usernameClaim: email, usernamePrefix: "oidc:"}`, is.URL)))
	is.AllowClient("peloton-ui", url+"/ui/signin/oidc")
	runScenario(t, node, uiDir, browser, url, "oidc", "ISSUER_URL="+is.URL, "OIDC_USER=oidc:alice@example.com", "ADMIN_TOKEN="+lab.Tokens["root"])
}

// startSecured starts a `peloton server` of region east on 5 sim hosts,
// plain HTTP on loopback, with the auth line given, stopped when the test
// ends; it returns its URL once healthy.
func startSecured(t *testing.T, dir, authLine string, more ...string) string {
	t.Helper()
	addr := testkit.FreeAddr(t)
	cfg := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("region: east\naddr: %s\ndataDir: %s\nhosts: [\"sim,hosts=5,duration=1h\"]\n%s\n%s",
		addr, filepath.Join(dir, "data"), authLine, strings.Join(more, ""))), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testkit.StartServerProcess(t, binary, cfg, testkit.Options{Name: "peloton server", Stop: testkit.Stopping{Signal: syscall.SIGTERM, Within: 20 * time.Second}})
	url := "http://" + addr
	srv.WaitHealthy(nil, url, 30*time.Second)
	return url
}

// TestBrowserManyJobs opens the jobs list, the overview and a job's page
// with many jobs present (PELOTON_UI_JOBS, default 10,000; CI sets fewer)
// on `peloton dev` (one region, 20 sim hosts), and fails when a page reads
// more than a page of jobs in one answer, or job listings whose bytes add
// up to more than a bound proportional to a page: a page must never
// download the whole job list. It prints how long the jobs are to create,
// and each page to show its first rows.
func TestBrowserManyJobs(t *testing.T) {
	node, uiDir, browser := browserTools(t)
	jobs := 10000
	if v := os.Getenv("PELOTON_UI_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PELOTON_UI_JOBS=%q: want a count of jobs", v)
		}
		jobs = n
	}
	d := testkit.StartDevWith(t, binary, testkit.ServerOptions{Options: testkit.Options{LogLines: 60}, Healthy: 60 * time.Second}, t.TempDir(),
		"--regions", "1", "--hosts", "sim,hosts=20,cpu=8,mem=16384,duration=1h")
	token := strings.TrimPrefix(testkit.DevHeader(strings.TrimPrefix(d.URL, "http://")), "Bearer ")
	runScenario(t, node, uiDir, browser, d.URL, "many", "DEV_TOKEN="+token, fmt.Sprintf("JOBS=%d", jobs))
}

// TestUIGallery takes a screenshot of every page of the UI on a fresh
// `peloton dev --regions 3` given pools, jobs, a canary update and a
// migration (and of the sign-in page of a server offering OIDC sign-in).
// They go to the test's artifacts; with PELOTON_UI_GALLERY=1 (make
// ui-gallery) they go to docs/img/gallery, listed in docs/ui-gallery.md.
func TestUIGallery(t *testing.T) {
	node, uiDir, browser := browserTools(t)
	is := oidctest.New(t)
	dir := t.TempDir()
	lab := testkit.NewLab(t, binary, dir, testkit.LabSpec{Tokens: []string{"root"}, Policy: "bindings:\n  - {subjects: [root], role: admin}\n"})
	signin := startSecured(t, dir, lab.AuthConfig(fmt.Sprintf(`oidc: {issuer: %q, audience: peloton}`, is.URL)))
	url := startDev(t)
	token := strings.TrimPrefix(testkit.DevHeader(strings.TrimPrefix(url, "http://")), "Bearer ")
	env := []string{"DEV_TOKEN=" + token, "SIGNIN_URL=" + signin}
	if os.Getenv("PELOTON_UI_GALLERY") != "" {
		out := testkit.RepoPath("docs", "img", "gallery")
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		env = append(env, "GALLERY_OUT="+out, "GALLERY_MD="+testkit.RepoPath("docs", "ui-gallery.md"))
	}
	runScenario(t, node, uiDir, browser, url, "gallery", env...)
}

// startDev starts `peloton dev --regions 3` on sim hosts, stopped when the
// test ends, and returns the URL of its first region (east) once every
// region is alive, within 60 s of its start. Each region has two
// clusters: sim (5 hosts) and a small one, spare (2 hosts of 2 cpu), that
// the migrations scenario moves to.
func startDev(t *testing.T) string {
	t.Helper()
	start := time.Now()
	d := testkit.StartDevWith(t, binary, testkit.ServerOptions{Options: testkit.Options{LogLines: 60}, Healthy: 60 * time.Second}, t.TempDir(),
		"--regions", "3", "--hosts", "sim,hosts=5,duration=1h", "--hosts", "sim:spare,hosts=2,cpu=2,mem=1024,duration=1h",
		"--suspect-after", "1s", "--fail-after", "3s", "--recover-after", "2s",
		// History sampled every second, so the pools scenario sees it grow.
		"--history-interval", "1s")
	d.WaitUntil(60*time.Second-time.Since(start), "three regions alive", func() bool { return d.RegionsAlive() == 3 })
	return d.URL
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
