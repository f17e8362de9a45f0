package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"strings"
	"sync"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
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
	next.Type, next.Pool, next.MaxAttempts = model.JobService, core.RootPool, 3
	next.Task.Env = map[string]string{"V": "2"}
	// Watched from before the update: the pass that stores it already
	// rolls its first batch, before UpdateJob answers.
	w := s.watchAvailability(job, 10)
	if _, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: next, Options: UpdateOptions{BatchSize: 5}}); err != nil {
		t.Fatal(err)
	}
	s.until("update done", func() bool {
		j, _ := s.e.Reads().GetJob(job)
		u, err := s.e.Reads().GetUpdate(context.Background(), j.Status.Update)
		return err == nil && u.State == model.UpdateSucceeded
	})
	maxDown, sawWaiting := w.stop(s, "waiting for SLA: 2/2 unavailable")
	if maxDown > 2 {
		t.Fatalf("%d instances down at once, SLA allows 2", maxDown)
	}
	if !sawWaiting {
		t.Errorf("the job never said it was waiting for the SLA: %q", w.messages)
	}
	for _, tk := range s.tasks(job) {
		if tk.ConfigVersion != 2 {
			t.Errorf("instance %d on config %d", tk.ID.Instance, tk.ConfigVersion)
		}
	}
}

// availabilityWatch observes a job at the end of every pass of the loop:
// the most instances ever unavailable at once, and every message the job
// showed.
type availabilityWatch struct {
	mu       sync.Mutex
	maxDown  int
	messages []string
}

func (s *testShard) watchAvailability(job model.JobID, instances int) *availabilityWatch {
	w := &availabilityWatch{}
	s.e.mu.Lock()
	s.e.afterStep = func() {
		je := s.e.c.Jobs[job]
		if je == nil {
			return
		}
		down := instances
		for _, t := range je.Tasks {
			if sla.Available(t) && t.Goal != model.TaskKilled && s.e.c.Queue.Restarting[core.GangOf(je, t.ID.Instance)] == nil {
				down--
			}
		}
		w.mu.Lock()
		w.maxDown = max(w.maxDown, down)
		w.messages = append(w.messages, je.Job.Status.Message)
		w.mu.Unlock()
	}
	s.e.mu.Unlock()
	return w
}

// stop ends the watch and returns the most instances down at once and
// whether any message of the job contained text.
func (w *availabilityWatch) stop(s *testShard, text string) (int, bool) {
	s.e.mu.Lock()
	s.e.afterStep = nil
	s.e.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.messages {
		if strings.Contains(m, text) {
			return w.maxDown, true
		}
	}
	return w.maxDown, false
}
