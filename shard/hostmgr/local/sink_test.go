package local

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// waitTimeout bounds every wait for a process to do something.
const waitTimeout = 30 * time.Second

// recordingSink keeps everything a plugin reports and lets tests wait for it.
type recordingSink struct {
	mu       sync.Mutex
	hosts    []model.Host
	statuses []hostmgr.TaskStatus
	changed  chan struct{}
}

func newRecordingSink() *recordingSink {
	return &recordingSink{changed: make(chan struct{})}
}

func (s *recordingSink) HostsUpdated(hosts []model.Host) {
	s.mu.Lock()
	s.hosts = append(s.hosts, hosts...)
	s.signalLocked()
	s.mu.Unlock()
}

func (s *recordingSink) HostsRemoved([]model.HostID) {}

func (s *recordingSink) TaskStatuses(statuses []hostmgr.TaskStatus) {
	s.mu.Lock()
	s.statuses = append(s.statuses, statuses...)
	s.signalLocked()
	s.mu.Unlock()
}

func (s *recordingSink) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// history returns the states reported for a run, in order.
func (s *recordingSink) history(run model.RunID) []hostmgr.TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return historyOf(s.statuses, run)
}

// historyOf picks the statuses of run, in order.
func historyOf(statuses []hostmgr.TaskStatus, run model.RunID) []hostmgr.TaskStatus {
	var out []hostmgr.TaskStatus
	for _, st := range statuses {
		if st.Run == run {
			out = append(out, st)
		}
	}
	return out
}

// waitUntil waits until cond holds over the recorded statuses; cond runs
// with the sink locked.
func (s *recordingSink) waitUntil(t *testing.T, what string, cond func(statuses []hostmgr.TaskStatus) bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		s.mu.Lock()
		ok := cond(s.statuses)
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

// waitState waits for a status of run in state and returns it.
func (s *recordingSink) waitState(t *testing.T, run model.RunID, state model.TaskState) hostmgr.TaskStatus {
	t.Helper()
	var found hostmgr.TaskStatus
	s.waitUntil(t, string(run)+" "+state.String(), func(statuses []hostmgr.TaskStatus) bool {
		for _, st := range statuses {
			if st.Run == run && st.State == state {
				found = st
				return true
			}
		}
		return false
	})
	return found
}

// waitTerminal waits for the first terminal status of run.
func (s *recordingSink) waitTerminal(t *testing.T, run model.RunID) hostmgr.TaskStatus {
	t.Helper()
	var found hostmgr.TaskStatus
	s.waitUntil(t, string(run)+" to end", func(statuses []hostmgr.TaskStatus) bool {
		for _, st := range statuses {
			if st.Run == run && st.State.IsTerminal() {
				found = st
				return true
			}
		}
		return false
	})
	return found
}

// startPlugin makes a plugin on dir and runs it until the test ends.
func startPlugin(t *testing.T, dir string) (*Plugin, *recordingSink, context.CancelFunc) {
	t.Helper()
	return startPluginWith(t, Config{
		Cluster:      "local",
		Dir:          reachable(t, dir),
		Clock:        clock.Real{},
		Hostname:     "box",
		Executable:   testExecutable(t),
		PollInterval: 20 * time.Millisecond,
	})
}

// startPluginWith is startPlugin with a config of the test's.
func startPluginWith(t *testing.T, cfg Config) (*Plugin, *recordingSink, context.CancelFunc) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := newRecordingSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, sink) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(stop) })
	return p, sink, func() { once.Do(stop) }
}

func launchOne(t *testing.T, p *Plugin, run model.RunID, task *model.TaskSpec) {
	t.Helper()
	err := p.Launch(context.Background(), []hostmgr.Launch{{Run: run, Host: p.Host().ID, Task: task}})
	if err != nil {
		t.Fatalf("Launch %s: %v", run, err)
	}
}

// eventually polls cond until it holds, failing the test after waitTimeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
