package mesos

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// recordingSink keeps what a plugin reported.
type recordingSink struct {
	mu       sync.Mutex
	hosts    map[model.HostID]model.Host
	removed  []model.HostID
	statuses []hostmgr.TaskStatus
}

func newSink() *recordingSink { return &recordingSink{hosts: map[model.HostID]model.Host{}} }

func (s *recordingSink) HostsUpdated(hs []model.Host) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hs {
		s.hosts[h.ID] = h
	}
}

func (s *recordingSink) HostsRemoved(ids []model.HostID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.hosts, id)
	}
	s.removed = append(s.removed, ids...)
}

func (s *recordingSink) TaskStatuses(sts []hostmgr.TaskStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, sts...)
}

func (s *recordingSink) host(id model.HostID) (model.Host, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.hosts[id]
	return h, ok
}

func (s *recordingSink) hostCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hosts)
}

// last returns the last status of a run.
func (s *recordingSink) last(run model.RunID) (hostmgr.TaskStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.statuses) - 1; i >= 0; i-- {
		if s.statuses[i].Run == run {
			return s.statuses[i], true
		}
	}
	return hostmgr.TaskStatus{}, false
}

// all returns a run's statuses in order.
func (s *recordingSink) all(run model.RunID) []hostmgr.TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hostmgr.TaskStatus
	for _, st := range s.statuses {
		if st.Run == run {
			out = append(out, st)
		}
	}
	return out
}

func (s *recordingSink) states(run model.RunID) []model.TaskState {
	var out []model.TaskState
	for _, st := range s.all(run) {
		out = append(out, st.State)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cluster is an emulated master served over HTTP.
type cluster struct {
	m   *mesostest.Master
	srv *httptest.Server
}

func newCluster(t *testing.T, cfg mesostest.Config, agents ...mesostest.AgentSpec) *cluster {
	t.Helper()
	if cfg.AllocationInterval == 0 {
		cfg.AllocationInterval = 10 * time.Millisecond
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 100 * time.Millisecond
	}
	if cfg.UpdateRetry == 0 {
		cfg.UpdateRetry = 500 * time.Millisecond
	}
	m := mesostest.New(cfg)
	if err := m.AddAgents(agents...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	srv := httptest.NewServer(m)
	t.Cleanup(func() {
		cancel()
		<-done
		srv.CloseClientConnections()
		srv.Close()
	})
	return &cluster{m: m, srv: srv}
}

func agents(n int, cpu, mem float64) []mesostest.AgentSpec {
	out := make([]mesostest.AgentSpec, n)
	for i := range out {
		out[i] = mesostest.AgentSpec{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("agent-%d", i), CPU: cpu, MemMB: mem, DiskMB: 1000,
			Attributes: map[string]string{"zone": fmt.Sprintf("z%d", i%2)}}
	}
	return out
}

// runningPlugin is a plugin whose Run goroutine is going.
type runningPlugin struct {
	p      *Plugin
	sink   *recordingSink
	cancel context.CancelFunc
	done   chan error
}

func startPlugin(t *testing.T, cfg Config) *runningPlugin {
	t.Helper()
	if cfg.Cluster == "" {
		cfg.Cluster = "dc1"
	}
	if cfg.LaunchWait == 0 {
		cfg.LaunchWait = 2 * time.Second
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 20 * time.Millisecond
		cfg.MaxBackoff = 200 * time.Millisecond
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rp := &runningPlugin{p: p, sink: newSink(), cancel: cancel, done: make(chan error, 1)}
	go func() { rp.done <- p.Run(ctx, rp.sink) }()
	t.Cleanup(rp.stop)
	return rp
}

func (rp *runningPlugin) stop() {
	rp.cancel()
	<-rp.done
	rp.done <- nil // later stops return at once
}

func launch(run string, host model.HostID, cpu float64, env map[string]string) hostmgr.Launch {
	return hostmgr.Launch{Run: model.RunID(run), Host: host,
		Task:   &model.TaskSpec{Command: "/bin/true", Args: []string{"x"}, Env: env, Resources: model.Resources{MilliCPU: model.CoresToMilli(cpu), MemMB: 64}},
		Labels: map[string]string{"peloton.job": strings.Split(run, "-")[0]}}
}

func waitState(t *testing.T, s *recordingSink, run string, want model.TaskState) hostmgr.TaskStatus {
	t.Helper()
	waitFor(t, run+" "+want.String(), func() bool {
		for _, st := range s.states(model.RunID(run)) {
			if st == want {
				return true
			}
		}
		return false
	})
	st, _ := s.last(model.RunID(run))
	return st
}
