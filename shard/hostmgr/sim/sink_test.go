package sim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// waitTimeout bounds every wait for the Run goroutine.
const waitTimeout = 30 * time.Second

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// recordingSink keeps every sink call, in order, and lets tests wait.
type recordingSink struct {
	mu          sync.Mutex
	calls       []string // "updated", "removed", "statuses", in order
	hosts       map[model.HostID]model.Host
	removed     []model.HostID
	statuses    []hostmgr.TaskStatus
	statusCalls []int // size of each TaskStatuses call
	changed     chan struct{}
}

func newRecordingSink() *recordingSink {
	return &recordingSink{hosts: make(map[model.HostID]model.Host), changed: make(chan struct{})}
}

func (s *recordingSink) HostsUpdated(hosts []model.Host) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "updated")
	for _, h := range hosts {
		s.hosts[h.ID] = h
	}
	s.signalLocked()
}

func (s *recordingSink) HostsRemoved(ids []model.HostID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "removed")
	for _, id := range ids {
		delete(s.hosts, id)
	}
	s.removed = append(s.removed, ids...)
	s.signalLocked()
}

func (s *recordingSink) TaskStatuses(statuses []hostmgr.TaskStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "statuses")
	s.statuses = append(s.statuses, statuses...)
	s.statusCalls = append(s.statusCalls, len(statuses))
	s.signalLocked()
}

func (s *recordingSink) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitUntil waits until cond, run with the sink locked, holds.
func (s *recordingSink) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		s.mu.Lock()
		ok := cond()
		changed := s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// historyLocked returns the statuses of run, in order.
func (s *recordingSink) historyLocked(run model.RunID) []hostmgr.TaskStatus {
	var out []hostmgr.TaskStatus
	for _, st := range s.statuses {
		if st.Run == run {
			out = append(out, st)
		}
	}
	return out
}

func (s *recordingSink) history(run model.RunID) []hostmgr.TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.historyLocked(run)
}

// waitStatuses waits until run has been reported n times and returns them.
func (s *recordingSink) waitStatuses(t *testing.T, run model.RunID, n int) []hostmgr.TaskStatus {
	t.Helper()
	var got []hostmgr.TaskStatus
	s.waitUntil(t, string(run)+" reports", func() bool {
		got = s.historyLocked(run)
		return len(got) >= n
	})
	return got
}

// startSim builds a simulation on a fake clock and runs it until the test
// ends.
func startSim(t *testing.T, cfg Config) (*Plugin, *recordingSink, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(epoch)
	cfg.Clock = fake
	if cfg.Cluster == "" {
		cfg.Cluster = "sim"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := newRecordingSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, sink) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return p, sink, fake
}

func task(env ...string) *model.TaskSpec {
	t := &model.TaskSpec{Command: "simulated", Env: map[string]string{}}
	for i := 0; i+1 < len(env); i += 2 {
		t.Env[env[i]] = env[i+1]
	}
	return t
}

func launch(t *testing.T, p *Plugin, launches ...hostmgr.Launch) {
	t.Helper()
	if err := p.Launch(context.Background(), launches); err != nil {
		t.Fatal(err)
	}
}
