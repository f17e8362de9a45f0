package jobmgr

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// A rolling update of a service never takes more instances down than its
// SLA allows, whatever its batch size, and says so while it waits.
func TestRollingUpdateHonoursSLA(t *testing.T) {
	s := newTestShard(t, simHosts(5))
	spec := oneCore(10)
	spec.SLA = &model.SLA{MaxUnavailable: 2}
	spec.Task.HealthCheck = &model.HealthCheck{Kind: model.ProbeCommand, Command: "true"}
	job := s.service(spec)
	s.until("10 running", s.allRunning(job, 10))
	next := spec
	next.Type, next.Pool, next.MaxAttempts = model.JobService, RootPool, 3
	next.Task.Env = map[string]string{"V": "2"}
	if _, err := s.e.UpdateJob(context.Background(), job, next, UpdateOptions{BatchSize: 5}); err != nil {
		t.Fatal(err)
	}
	w := s.watchAvailability(job, 10)
	s.until("update done", func() bool {
		j, _ := s.e.GetJob(job)
		u, err := s.e.GetUpdate(context.Background(), j.Status.Update)
		return err == nil && u.State == model.UpdateSucceeded
	})
	maxDown, sawWaiting := w.stop("waiting for SLA: 2/2 unavailable")
	if maxDown > 2 {
		t.Fatalf("%d instances down at once, SLA allows 2", maxDown)
	}
	if !sawWaiting {
		t.Errorf("the job never said it was waiting for the SLA")
	}
	for _, tk := range s.tasks(job) {
		if tk.ConfigVersion != 2 {
			t.Errorf("instance %d on config %d", tk.ID.Instance, tk.ConfigVersion)
		}
	}
}

// availabilityWatch follows a job's events and keeps the most instances
// ever unavailable at once after a pass, and whether the job's message
// ever held a given text.
type availabilityWatch struct {
	mu       sync.Mutex
	maxDown  int
	messages []string
	stopped  chan struct{}
	done     chan struct{}
}

func (s *testShard) watchAvailability(job model.JobID, instances int) *availabilityWatch {
	sub, _ := s.e.Watch(job, 0)
	w := &availabilityWatch{stopped: make(chan struct{}), done: make(chan struct{})}
	je := &jobEntry{}
	state := map[uint32]*model.TaskRuntime{}
	for _, tk := range s.tasks(job) {
		state[tk.ID.Instance] = tk
	}
	go func() {
		defer close(w.done)
		defer sub.Cancel()
		for {
			select {
			case <-w.stopped:
				return
			case ev, ok := <-sub.C:
				if !ok {
					return
				}
				w.mu.Lock()
				if ev.JobStatus != nil {
					w.messages = append(w.messages, ev.JobStatus.Message)
				}
				if ev.Task != nil {
					state[ev.Task.ID.Instance] = ev.Task
					down := instances - len(state)
					for _, tk := range state {
						if !je.available(tk) || tk.Goal == model.TaskKilled {
							down++
						}
					}
					w.maxDown = max(w.maxDown, down)
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// stop ends the watch and returns the most instances down at once and
// whether any job message contained text.
func (w *availabilityWatch) stop(text string) (int, bool) {
	close(w.stopped)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.messages {
		if strings.Contains(m, text) {
			return w.maxDown, true
		}
	}
	return w.maxDown, false
}
