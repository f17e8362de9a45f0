package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

var shape = model.Resources{MilliCPU: 8000, MemMB: 32768, DiskMB: 100000}

func TestHostsFromSpecsAndGenerator(t *testing.T) {
	_, sink, _ := startSim(t, Config{
		Cluster: "c1",
		Hosts:   []HostSpec{{Name: "gpu-box", Capacity: model.Resources{MilliCPU: 4000, GPU: 2}, Labels: map[string]string{"gpu": "a100"}}},
		Generate: Generator{Count: 5, Shape: shape, Labels: map[string][]string{
			"zone": {"a", "b", "c"},
			"rack": {"r1", "r2"},
		}},
	})
	sink.waitUntil(t, "hosts", func() bool { return len(sink.hosts) == 6 })
	sink.mu.Lock()
	defer sink.mu.Unlock()
	want := map[model.HostID][2]string{ // zone, rack
		"c1/host-0": {"a", "r1"}, "c1/host-1": {"b", "r2"}, "c1/host-2": {"c", "r1"},
		"c1/host-3": {"a", "r2"}, "c1/host-4": {"b", "r1"},
	}
	for id, labels := range want {
		h, ok := sink.hosts[id]
		if !ok {
			t.Errorf("host %s missing", id)
			continue
		}
		if h.Labels["zone"] != labels[0] || h.Labels["rack"] != labels[1] || h.Capacity != shape ||
			h.Kind != HostKind || h.Cluster != "c1" || h.State != model.HostUp || h.Labels["hostname"] != h.Hostname {
			t.Errorf("host %s = %+v", id, h)
		}
	}
	if h := sink.hosts["c1/gpu-box"]; h.Capacity.GPU != 2 || h.Labels["gpu"] != "a100" {
		t.Errorf("gpu-box = %+v", h)
	}
}

func TestGeneratedNamesSortInOrder(t *testing.T) {
	specs, err := Config{Generate: Generator{Count: 12, NamePrefix: "n"}}.specs()
	if err != nil {
		t.Fatal(err)
	}
	if specs[0].Name != "n00" || specs[11].Name != "n11" {
		t.Errorf("names %q .. %q", specs[0].Name, specs[11].Name)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cases := map[string]struct {
		cfg  Config
		want error
	}{
		"no cluster":       {Config{}, ErrInvalidConfig},
		"slash in cluster": {Config{Cluster: "a/b"}, ErrInvalidConfig},
		"negative default": {Config{Cluster: "c", DefaultDuration: -time.Second}, ErrInvalidConfig},
		"negative retain":  {Config{Cluster: "c", RetainFinished: -1}, ErrInvalidConfig},
		"negative count":   {Config{Cluster: "c", Generate: Generator{Count: -1}}, ErrInvalidConfig},
		"empty label":      {Config{Cluster: "c", Generate: Generator{Count: 1, Labels: map[string][]string{"zone": nil}}}, ErrInvalidConfig},
		"unnamed host":     {Config{Cluster: "c", Hosts: []HostSpec{{}}}, ErrInvalidConfig},
		"negative cpu":     {Config{Cluster: "c", Hosts: []HostSpec{{Name: "h", Capacity: model.Resources{MilliCPU: -1000}}}}, ErrInvalidConfig},
		"duplicate host":   {Config{Cluster: "c", Hosts: []HostSpec{{Name: "host-0"}}, Generate: Generator{Count: 1}}, ErrDuplicateHost},
	}
	for name, tc := range cases {
		if _, err := New(tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

func TestRunsEndWhenTheirTimeComes(t *testing.T) {
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: 2, Shape: shape}, DefaultDuration: 10 * time.Second})
	host := model.HostID("sim/host-0")
	cases := []struct {
		run         model.RunID
		host        model.HostID
		task        *model.TaskSpec
		running     bool
		wantState   model.TaskState
		wantReason  string
		wantCode    int32
		wantMessage string // substring
		endsAfter   time.Duration
	}{
		{"default", host, task(), true, model.TaskSucceeded, model.ReasonExitZero, 0, "exit code 0", 10 * time.Second},
		{"five", host, task(EnvDuration, "5s"), true, model.TaskSucceeded, model.ReasonExitZero, 0, "exit code 0", 5 * time.Second},
		{"fails", host, task(EnvDuration, "5s", EnvExitCode, "3"), true, model.TaskFailed, model.ReasonExitNonZero, 3, "exit code 3", 5 * time.Second},
		{"instant", host, task(EnvDuration, "0s"), true, model.TaskSucceeded, model.ReasonExitZero, 0, "exit code 0", 0},
		{"bad-duration", host, task(EnvDuration, "soon"), false, model.TaskFailed, model.ReasonLaunchError, 0, EnvDuration, 0},
		{"negative", host, task(EnvDuration, "-1s"), false, model.TaskFailed, model.ReasonLaunchError, 0, EnvDuration, 0},
		{"bad-code", host, task(EnvExitCode, "x"), false, model.TaskFailed, model.ReasonLaunchError, 0, EnvExitCode, 0},
		{"no-spec", host, nil, false, model.TaskFailed, model.ReasonLaunchError, 0, "no task spec", 0},
		{"no-host", "sim/nowhere", task(), false, model.TaskLost, model.ReasonHostLost, 0, `"sim/nowhere"`, 0},
	}
	var launches []hostmgr.Launch
	for _, tc := range cases {
		launches = append(launches, hostmgr.Launch{Run: tc.run, Host: tc.host, Task: tc.task})
	}
	launch(t, p, launches...)
	for _, step := range []time.Duration{0, 5 * time.Second, 5 * time.Second} {
		fake.Advance(step)
		elapsed := fake.Now().Sub(epoch)
		for _, tc := range cases {
			if tc.endsAfter > elapsed {
				continue
			}
			want := 1
			if tc.running {
				want = 2
			}
			h := sink.waitStatuses(t, tc.run, want)
			end := h[len(h)-1]
			if end.State != tc.wantState || end.Reason != tc.wantReason || end.ExitCode != tc.wantCode || !strings.Contains(end.Message, tc.wantMessage) {
				t.Errorf("%s: ended %v/%s code %d %q; want %v/%s code %d, message with %q", tc.run, end.State, end.Reason,
					end.ExitCode, end.Message, tc.wantState, tc.wantReason, tc.wantCode, tc.wantMessage)
			}
			if tc.running && (h[0].State != model.TaskRunning || !h[0].Time.Equal(epoch) || !end.Time.Equal(epoch.Add(tc.endsAfter))) {
				t.Errorf("%s: history %+v", tc.run, h)
			}
		}
		// Whatever is not due yet is still only RUNNING.
		for _, tc := range cases {
			if tc.running && tc.endsAfter > elapsed {
				if h := sink.history(tc.run); len(h) != 1 {
					t.Errorf("%s after %v: history %+v, want RUNNING only", tc.run, elapsed, h)
				}
			}
		}
	}
}

func TestKill(t *testing.T) {
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: 1}, DefaultDuration: time.Minute})
	host := model.HostID("sim/host-0")
	launch(t, p, hostmgr.Launch{Run: "victim", Host: host, Task: task()})
	sink.waitStatuses(t, "victim", 1)
	fake.Advance(10 * time.Second)
	if err := p.Kill(context.Background(), "victim", host, time.Second); err != nil {
		t.Fatal(err)
	}
	h := sink.waitStatuses(t, "victim", 2)
	if h[1].State != model.TaskKilled || h[1].Reason != model.ReasonKilled || !h[1].Time.Equal(epoch.Add(10*time.Second)) {
		t.Errorf("kill: %+v", h[1])
	}
	// The run's own end never comes; a second kill reports KILLED again and
	// an unknown run is LOST.
	launch(t, p, hostmgr.Launch{Run: "marker", Host: host, Task: task(EnvDuration, "2m")})
	fake.Advance(2 * time.Minute)
	sink.waitStatuses(t, "marker", 2)
	if err := p.Kill(context.Background(), "victim", host, 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(context.Background(), "ghost", host, 0); err != nil {
		t.Fatal(err)
	}
	h = sink.waitStatuses(t, "victim", 3)
	if len(h) != 3 || h[2].State != model.TaskKilled {
		t.Errorf("victim history %+v", h)
	}
	if g := sink.waitStatuses(t, "ghost", 1); g[0].State != model.TaskLost || g[0].Reason != model.ReasonUnknownTask {
		t.Errorf("ghost %+v", g)
	}
}

func TestKillAfterDeadlineReportsTheRealEnd(t *testing.T) {
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: 1}, DefaultDuration: time.Second})
	host := model.HostID("sim/host-0")
	launch(t, p, hostmgr.Launch{Run: "done", Host: host, Task: task(EnvExitCode, "0")})
	fake.Advance(time.Hour)
	// Whether or not the timer loop got there first, the run had ended.
	if err := p.Kill(context.Background(), "done", host, 0); err != nil {
		t.Fatal(err)
	}
	h := sink.waitStatuses(t, "done", 3)
	for _, st := range h[1:] {
		if st.State != model.TaskSucceeded || !st.Time.Equal(epoch.Add(time.Second)) {
			t.Errorf("status %+v, want SUCCEEDED at its deadline", st)
		}
	}
}

func TestReconcile(t *testing.T) {
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: 1}, DefaultDuration: time.Minute})
	host := model.HostID("sim/host-0")
	launch(t, p,
		hostmgr.Launch{Run: "running", Host: host, Task: task()},
		hostmgr.Launch{Run: "ended", Host: host, Task: task(EnvDuration, "1s", EnvExitCode, "9")})
	fake.Advance(time.Second)
	sink.waitStatuses(t, "ended", 2)
	err := p.Reconcile(context.Background(), []hostmgr.RunRef{{Run: "running", Host: host}, {Run: "ended", Host: host}, {Run: "unknown", Host: host}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[model.RunID]model.TaskState{"running": model.TaskRunning, "ended": model.TaskFailed, "unknown": model.TaskLost}
	for run, state := range want {
		h := sink.waitStatuses(t, run, map[model.RunID]int{"running": 2, "ended": 3, "unknown": 1}[run])
		if last := h[len(h)-1]; last.State != state {
			t.Errorf("%s reconciled as %v, want %v", run, last.State, state)
		}
	}
}

func TestRemoveAndAddHost(t *testing.T) {
	p, sink, _ := startSim(t, Config{Generate: Generator{Count: 2}, DefaultDuration: time.Minute})
	gone, stays := model.HostID("sim/host-0"), model.HostID("sim/host-1")
	launch(t, p,
		hostmgr.Launch{Run: "a", Host: gone, Task: task()},
		hostmgr.Launch{Run: "b", Host: gone, Task: task()},
		hostmgr.Launch{Run: "c", Host: stays, Task: task()})
	sink.waitStatuses(t, "c", 1)
	if err := p.RemoveHost(gone); err != nil {
		t.Fatal(err)
	}
	for _, run := range []model.RunID{"a", "b"} {
		h := sink.waitStatuses(t, run, 2)
		if h[1].State != model.TaskLost || h[1].Reason != model.ReasonHostLost || h[1].Host != gone {
			t.Errorf("%s: %+v", run, h[1])
		}
	}
	sink.mu.Lock()
	if _, ok := sink.hosts[gone]; ok || len(sink.removed) != 1 {
		t.Errorf("sink hosts %v, removed %v", sink.hosts, sink.removed)
	}
	// The host removal is reported before its runs are LOST.
	removedAt := -1
	for i, c := range sink.calls {
		if c == "removed" {
			removedAt = i
		}
	}
	if removedAt < 0 || removedAt == len(sink.calls)-1 {
		t.Errorf("calls %v: want HostsRemoved then statuses", sink.calls)
	}
	sink.mu.Unlock()
	if err := p.RemoveHost(gone); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("second remove: %v", err)
	}
	launch(t, p, hostmgr.Launch{Run: "d", Host: gone, Task: task()})
	if h := sink.waitStatuses(t, "d", 1); h[0].State != model.TaskLost {
		t.Errorf("launch on removed host: %+v", h[0])
	}
	if err := p.AddHost(HostSpec{Name: "host-0", Capacity: shape}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddHost(HostSpec{Name: "host-1"}); !errors.Is(err, ErrDuplicateHost) {
		t.Errorf("duplicate AddHost: %v", err)
	}
	sink.waitUntil(t, "host back", func() bool { _, ok := sink.hosts[gone]; return ok })
	launch(t, p, hostmgr.Launch{Run: "e", Host: gone, Task: task()})
	if h := sink.waitStatuses(t, "e", 1); h[0].State != model.TaskRunning {
		t.Errorf("launch on re-added host: %+v", h[0])
	}
	if h := sink.history("c"); len(h) != 1 {
		t.Errorf("run on the other host: %+v", h)
	}
}

func TestUsage(t *testing.T) {
	p, _, _ := startSim(t, Config{Generate: Generator{Count: 1, Shape: shape}})
	host := model.HostID("sim/host-0")
	if u, err := p.Usage(host); err != nil || !u.IsZero() {
		t.Errorf("initial usage %v, %v", u, err)
	}
	used := model.Resources{MilliCPU: 3500, MemMB: 1024}
	if err := p.SetUsage(host, used); err != nil {
		t.Fatal(err)
	}
	if u, err := p.Usage(host); err != nil || u != used {
		t.Errorf("usage %v, %v; want %v", u, err, used)
	}
	if err := p.SetUsage("sim/none", used); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("SetUsage unknown: %v", err)
	}
	if _, err := p.Usage("sim/none"); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("Usage unknown: %v", err)
	}
}

func TestStatusesArriveInBatches(t *testing.T) {
	const n = 20000
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: 100}, DefaultDuration: time.Second})
	launches := make([]hostmgr.Launch, n)
	spec := task()
	for i := range launches {
		launches[i] = hostmgr.Launch{Run: model.RunID(fmt.Sprintf("r-%d", i)), Host: model.HostID(fmt.Sprintf("sim/host-%02d", i%100)), Task: spec}
	}
	launch(t, p, launches...)
	fake.Advance(time.Second)
	sink.waitUntil(t, "all runs to end", func() bool { return len(sink.statuses) == 2*n })
	sink.mu.Lock()
	defer sink.mu.Unlock()
	perCall := (n + maxStatusBatch - 1) / maxStatusBatch
	if calls := len(sink.statusCalls); calls > 2*perCall+2 {
		t.Errorf("%d TaskStatuses calls for %d statuses, want at most %d", calls, 2*n, 2*perCall+2)
	}
	for _, size := range sink.statusCalls {
		if size > maxStatusBatch {
			t.Errorf("a batch of %d statuses exceeds %d", size, maxStatusBatch)
		}
	}
}

func TestForgetsOldestFinishedRuns(t *testing.T) {
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: 1}, RetainFinished: 2})
	host := model.HostID("sim/host-0")
	for i := range 3 {
		launch(t, p, hostmgr.Launch{Run: model.RunID(fmt.Sprint(i)), Host: host, Task: task(EnvDuration, fmt.Sprintf("%ds", i+1))})
	}
	fake.Advance(3 * time.Second)
	sink.waitStatuses(t, "2", 2)
	if err := p.Reconcile(context.Background(), []hostmgr.RunRef{{Run: "0", Host: host}, {Run: "1", Host: host}, {Run: "2", Host: host}}); err != nil {
		t.Fatal(err)
	}
	for run, want := range map[model.RunID]model.TaskState{"0": model.TaskLost, "1": model.TaskSucceeded, "2": model.TaskSucceeded} {
		if h := sink.waitStatuses(t, run, 3); h[2].State != want {
			t.Errorf("%s reconciled %v, want %v", run, h[2].State, want)
		}
	}
}

func TestRunTwiceIsRefused(t *testing.T) {
	p, sink, _ := startSim(t, Config{Generate: Generator{Count: 1}})
	sink.waitUntil(t, "first Run to report hosts", func() bool { return len(sink.hosts) == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx, newRecordingSink()) }()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrAlreadyRunning) {
			t.Errorf("second Run: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("second Run neither refused nor ended")
	}
}
