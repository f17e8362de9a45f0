package local

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

func TestVerdict(t *testing.T) {
	cases := []struct {
		threshold uint32
		results   string // y: success, n: failure
		want      string // state after each result: ? unknown, H healthy, U unhealthy
	}{
		{3, "nn", "??"},
		{3, "nnn", "??U"},
		{3, "y", "H"},
		{3, "ynnyn", "HHHHH"},
		{3, "ynnn", "HHHU"},
		{3, "nnnny", "??UUH"},
		{3, "nnynnynny", "??H" + "HHH" + "HHH"},
		{1, "ynyn", "HUHU"},
		{0, "n", "U"}, // a zero threshold counts as one
	}
	names := map[model.HealthState]byte{model.HealthUnknown: '?', model.HealthHealthy: 'H', model.HealthUnhealthy: 'U'}
	for _, tc := range cases {
		v := newVerdict(tc.threshold)
		var got []byte
		prev := model.HealthUnknown
		for _, r := range tc.results {
			state, changed := v.observe(r == 'y')
			if changed != (state != prev) {
				t.Errorf("threshold %d %q: changed=%v going %v → %v", tc.threshold, tc.results, changed, prev, state)
			}
			prev = state
			got = append(got, names[state])
		}
		if string(got) != tc.want {
			t.Errorf("threshold %d %q: states %q, want %q", tc.threshold, tc.results, got, tc.want)
		}
	}
}

func TestNewProbeRecord(t *testing.T) {
	ports := []model.NamedPort{{Name: "http", Port: 31005}, {Name: "admin", Port: 31006}}
	cases := []struct {
		name    string
		hc      model.HealthCheck
		want    probeRecord
		wantErr string
	}{
		{name: "http by name, defaults", hc: model.HealthCheck{Kind: model.ProbeHTTP, Port: "admin", Path: "healthz"},
			want: probeRecord{Kind: "http", Port: 31006, Path: "/healthz", Interval: model.DefaultProbeInterval,
				Timeout: model.DefaultProbeTimeout, FailureThreshold: model.DefaultProbeFailureThreshold}},
		{name: "tcp by number", hc: model.HealthCheck{Kind: model.ProbeTCP, Port: "8080", InitialDelay: time.Second, Interval: 2 * time.Second, Timeout: 3 * time.Second, FailureThreshold: 1},
			want: probeRecord{Kind: "tcp", Port: 8080, InitialDelay: time.Second, Interval: 2 * time.Second, Timeout: 3 * time.Second, FailureThreshold: 1}},
		{name: "command", hc: model.HealthCheck{Kind: model.ProbeCommand, Command: "test", Args: []string{"-f", "x"}},
			want: probeRecord{Kind: "command", Command: "test", Args: []string{"-f", "x"}, Interval: model.DefaultProbeInterval,
				Timeout: model.DefaultProbeTimeout, FailureThreshold: model.DefaultProbeFailureThreshold}},
		{name: "unknown port name", hc: model.HealthCheck{Kind: model.ProbeHTTP, Port: "web"},
			wantErr: `check: port "web" is neither a named port of the task nor a port number`},
		{name: "no port", hc: model.HealthCheck{Kind: model.ProbeTCP}, wantErr: `port "" is neither`},
		{name: "port too big", hc: model.HealthCheck{Kind: model.ProbeTCP, Port: "70000"}, wantErr: `port "70000" is neither`},
		{name: "command without command", hc: model.HealthCheck{Kind: model.ProbeCommand}, wantErr: "check: a command probe needs a command"},
		{name: "no kind", hc: model.HealthCheck{Port: "http"}, wantErr: "check: unknown probe kind 0"},
	}
	for _, tc := range cases {
		got, err := newProbeRecord("check", &tc.hc, ports)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Kind != tc.want.Kind || got.Port != tc.want.Port || got.Path != tc.want.Path ||
			got.Command != tc.want.Command || strings.Join(got.Args, " ") != strings.Join(tc.want.Args, " ") ||
			got.InitialDelay != tc.want.InitialDelay || got.Interval != tc.want.Interval ||
			got.Timeout != tc.want.Timeout || got.FailureThreshold != tc.want.FailureThreshold {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if rec, err := newProbeRecord("check", nil, ports); rec != nil || err != nil {
		t.Errorf("no check: %+v, %v", rec, err)
	}
}

// flakyEndpoint is a real HTTP server on 127.0.0.1 whose answers the test
// sets: it holds requests while gated, then answers with status.
type flakyEndpoint struct {
	srv     *httptest.Server
	status  atomic.Int32
	served  atomic.Int32 // requests answered
	failed  atomic.Int32 // requests answered with an error status
	gate    chan struct{}
	opening sync.Once
}

func newFlakyEndpoint(t *testing.T, gated bool) *flakyEndpoint {
	e := &flakyEndpoint{gate: make(chan struct{})}
	e.status.Store(http.StatusOK)
	if !gated {
		e.open()
	}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-e.gate:
		case <-r.Context().Done():
			return
		}
		code := int(e.status.Load())
		if r.URL.Path != "/healthz" {
			code = http.StatusNotFound
		}
		if code >= 400 {
			e.failed.Add(1)
		}
		e.served.Add(1)
		w.WriteHeader(code)
	}))
	t.Cleanup(func() {
		e.open()
		e.srv.Close()
	})
	return e
}

func (e *flakyEndpoint) open() { e.opening.Do(func() { close(e.gate) }) }

func (e *flakyEndpoint) port() uint32 {
	return uint32(e.srv.Listener.Addr().(*net.TCPAddr).Port)
}

// launch starts l on the plugin's host and kills it when the test ends.
func launch(t *testing.T, p *Plugin, l hostmgr.Launch) {
	t.Helper()
	l.Host = p.Host().ID
	if err := p.Launch(context.Background(), []hostmgr.Launch{l}); err != nil {
		t.Fatalf("Launch %s: %v", l.Run, err)
	}
	t.Cleanup(func() { stopRun(t, p, l.Run) })
}

// stopRun kills a run and waits until its executor recorded its end.
func stopRun(t *testing.T, p *Plugin, run model.RunID) {
	t.Helper()
	if err := p.Kill(context.Background(), run, p.Host().ID, 0); err != nil {
		t.Errorf("Kill %s: %v", run, err)
	}
	dir := filepath.Join(p.runsDir, pathElement(run))
	eventually(t, string(run)+" to end", func() bool {
		return !fileExists(dir) || fileExists(filepath.Join(dir, exitFile))
	})
}

// healthOf lists the Health (or, with ready, the Ready) values reported
// for a run while RUNNING, dropping repeats.
func healthOf(statuses []hostmgr.TaskStatus, run model.RunID, ready bool) []string {
	var out []string
	for _, st := range historyOf(statuses, run) {
		if st.State != model.TaskRunning {
			continue
		}
		h := st.Health
		if ready {
			h = st.Ready
		}
		if s := h.String(); len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// waitHealth waits until the last Health (or Ready) reported for run is want.
func (s *recordingSink) waitHealth(t *testing.T, run model.RunID, ready bool, want model.HealthState) hostmgr.TaskStatus {
	t.Helper()
	var found hostmgr.TaskStatus
	what := "health"
	if ready {
		what = "readiness"
	}
	s.waitUntil(t, string(run)+" "+what+" "+want.String(), func(statuses []hostmgr.TaskStatus) bool {
		h := historyOf(statuses, run)
		if len(h) == 0 {
			return false
		}
		found = h[len(h)-1]
		got := found.Health
		if ready {
			got = found.Ready
		}
		return found.State == model.TaskRunning && got == want
	})
	return found
}

func sleeper() *model.TaskSpec { return &model.TaskSpec{Command: "sleep", Args: []string{"30"}} }

func TestHTTPHealthCheckGoesUnknownHealthyUnhealthy(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	ep := newFlakyEndpoint(t, true)
	task := sleeper()
	task.Ports = []model.PortSpec{{Name: "http"}}
	task.HealthCheck = &model.HealthCheck{Kind: model.ProbeHTTP, Port: "http", Path: "/healthz",
		Interval: 20 * time.Millisecond, Timeout: 10 * time.Second, FailureThreshold: 3}
	launch(t, p, hostmgr.Launch{Run: "web", Task: task, Ports: []model.NamedPort{{Name: "http", Port: ep.port()}}})

	// The first probe hangs in the gated endpoint: no verdict yet.
	st := sink.waitState(t, "web", model.TaskRunning)
	if st.Health != model.HealthUnknown || st.Ready != model.HealthNone {
		t.Fatalf("first RUNNING: health %v ready %v, want UNKNOWN and none", st.Health, st.Ready)
	}
	ep.open()
	sink.waitHealth(t, "web", false, model.HealthHealthy)
	ep.status.Store(http.StatusInternalServerError)
	st = sink.waitHealth(t, "web", false, model.HealthUnhealthy)
	if n := ep.failed.Load(); n < 3 {
		t.Errorf("UNHEALTHY after %d failed probes, want at least 3", n)
	}
	want := "http probe failed (3 in a row): GET http://" + probeAddr(ep.port()) + "/healthz returned 500 Internal Server Error"
	if !strings.Contains(st.Message, want) {
		t.Errorf("message %q, want it to hold %q", st.Message, want)
	}
	sink.mu.Lock()
	got := strings.Join(healthOf(sink.statuses, "web", false), " ")
	sink.mu.Unlock()
	if got != "UNKNOWN HEALTHY UNHEALTHY" {
		t.Errorf("health went %q", got)
	}
	// Recovery is reported too.
	ep.status.Store(http.StatusFound)
	sink.waitHealth(t, "web", false, model.HealthHealthy)
}

func TestFailureThresholdIsHonoured(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	// Two failures, then a success, over and over: never three in a row.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 != 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	task := sleeper()
	task.HealthCheck = &model.HealthCheck{Kind: model.ProbeHTTP, Port: strconv.Itoa(port), Path: "/",
		Interval: 5 * time.Millisecond, Timeout: 5 * time.Second, FailureThreshold: 3}
	launch(t, p, hostmgr.Launch{Run: "flaky", Task: task})
	sink.waitHealth(t, "flaky", false, model.HealthHealthy)
	eventually(t, "30 probes", func() bool { return n.Load() >= 30 })
	sink.mu.Lock()
	got := strings.Join(healthOf(sink.statuses, "flaky", false), " ")
	sink.mu.Unlock()
	if got != "UNKNOWN HEALTHY" && got != "HEALTHY" {
		t.Errorf("health went %q, want no UNHEALTHY", got)
	}
	var rec healthRecord
	if ok, err := readJSON(filepath.Join(p.runsDir, "flaky", healthFile), &rec); !ok || err != nil || rec.Health != "HEALTHY" || rec.Changes != 1 {
		t.Errorf("health file: %+v %v %v; want HEALTHY after one change", rec, ok, err)
	}
}

func TestTCPHealthCheck(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := uint32(ln.Addr().(*net.TCPAddr).Port)
	task := sleeper()
	task.HealthCheck = &model.HealthCheck{Kind: model.ProbeTCP, Port: "db", Interval: 10 * time.Millisecond, FailureThreshold: 2}
	launch(t, p, hostmgr.Launch{Run: "db", Task: task, Ports: []model.NamedPort{{Name: "db", Port: port}}})
	sink.waitHealth(t, "db", false, model.HealthHealthy)
	ln.Close()
	st := sink.waitHealth(t, "db", false, model.HealthUnhealthy)
	if !strings.Contains(st.Message, "tcp probe failed (2 in a row)") || !strings.Contains(st.Message, "connection refused") {
		t.Errorf("message %q", st.Message)
	}
}

func TestCommandProbesRunInTheSandboxWithTheTaskEnvironment(t *testing.T) {
	p, sink, _ := startPlugin(t, t.TempDir())
	task := &model.TaskSpec{
		Command: "sh", Args: []string{"-c", `touch "$FLAG_FILE"; exec sleep 30`},
		Env: map[string]string{"FLAG_FILE": "flag"},
		// Healthy while the file the task made in its sandbox exists.
		HealthCheck: &model.HealthCheck{Kind: model.ProbeCommand, Command: "sh", Args: []string{"-c", `test -f "$FLAG_FILE" || { echo "no $FLAG_FILE in $PWD"; exit 1; }`},
			Interval: 10 * time.Millisecond, FailureThreshold: 1},
		// Never ready: the probe outlives its timeout.
		Readiness: &model.HealthCheck{Kind: model.ProbeCommand, Command: "sleep", Args: []string{"10"},
			Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond, FailureThreshold: 1},
	}
	launch(t, p, hostmgr.Launch{Run: "cmd", Task: task})
	sink.waitHealth(t, "cmd", false, model.HealthHealthy)
	// The report that turned readiness UNHEALTHY says why (a later report,
	// of the health check, may carry another message).
	const timedOut = "readiness probe: command probe failed (1 in a row): timed out after 50ms"
	sink.waitUntil(t, "cmd readiness UNHEALTHY, with why", func(statuses []hostmgr.TaskStatus) bool {
		for _, st := range historyOf(statuses, "cmd") {
			if st.Ready == model.HealthUnhealthy && strings.Contains(st.Message, timedOut) {
				return true
			}
		}
		return false
	})
	var st hostmgr.TaskStatus
	sandbox := filepath.Join(p.runsDir, "cmd", sandboxDir)
	if err := os.Remove(filepath.Join(sandbox, "flag")); err != nil {
		t.Fatal(err)
	}
	st = sink.waitHealth(t, "cmd", false, model.HealthUnhealthy)
	if want := "health check: command probe failed (1 in a row): exit status 1: no flag in " + sandbox; st.Message != want {
		t.Errorf("health message %q, want %q", st.Message, want)
	}
}

func TestProbingSurvivesARestartOfThePlugin(t *testing.T) {
	dir := t.TempDir()
	first, firstSink, stopFirst := startPlugin(t, dir)
	host := first.Host().ID
	ep := newFlakyEndpoint(t, false)
	task := sleeper()
	task.Readiness = &model.HealthCheck{Kind: model.ProbeHTTP, Port: "http", Path: "/healthz", Interval: 10 * time.Millisecond, FailureThreshold: 1}
	launch(t, first, hostmgr.Launch{Run: "kept", Task: task, Ports: []model.NamedPort{{Name: "http", Port: ep.port()}}})
	firstSink.waitHealth(t, "kept", true, model.HealthHealthy)
	stopFirst()

	// The executor keeps probing while no plugin runs.
	ep.status.Store(http.StatusBadGateway)
	eventually(t, "the health file to say not ready", func() bool {
		var rec healthRecord
		ok, _ := readJSON(filepath.Join(dir, "runs", "kept", healthFile), &rec)
		return ok && rec.Ready == "UNHEALTHY"
	})
	second, sink, _ := startPlugin(t, dir)
	if err := second.Reconcile(context.Background(), []hostmgr.RunRef{{Run: "kept", Host: host}}); err != nil {
		t.Fatal(err)
	}
	if st := sink.waitState(t, "kept", model.TaskRunning); st.Ready != model.HealthUnhealthy || st.Health != model.HealthNone {
		t.Errorf("adopted run: ready %v health %v, want UNHEALTHY and none", st.Ready, st.Health)
	}
	ep.status.Store(http.StatusOK)
	sink.waitHealth(t, "kept", true, model.HealthHealthy)
	stopRun(t, second, "kept")
}
