package jobmgr

import (
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestDeriveJobState(t *testing.T) {
	counts := func(kv ...any) *core.TaskCounts {
		var c core.TaskCounts
		for i := 0; i < len(kv); i += 2 {
			c[kv[i].(model.TaskState)] = uint32(kv[i+1].(int))
		}
		return &c
	}
	spec := &model.JobSpec{Instances: 4}
	cases := []struct {
		name    string
		killed  bool
		created uint32
		ran     bool
		c       *core.TaskCounts
		want    model.JobState
	}{
		{"nothing created", false, 0, false, counts(), model.JobInitialized},
		{"some created", false, 2, false, counts(model.TaskInitialized, 2), model.JobPending},
		{"queued", false, 4, false, counts(model.TaskPending, 4), model.JobPending},
		{"one running", false, 4, true, counts(model.TaskPending, 3, model.TaskRunning, 1), model.JobRunning},
		{"one done others pending", false, 4, true, counts(model.TaskPending, 3, model.TaskSucceeded, 1), model.JobRunning},
		{"all succeeded", false, 4, true, counts(model.TaskSucceeded, 4), model.JobSucceeded},
		{"one failed", false, 4, true, counts(model.TaskSucceeded, 3, model.TaskFailed, 1), model.JobFailed},
		{"stopping", true, 4, true, counts(model.TaskRunning, 2, model.TaskKilled, 2), model.JobKilling},
		{"stopped", true, 4, true, counts(model.TaskSucceeded, 2, model.TaskKilled, 2), model.JobKilled},
		{"stop raced with completion", true, 4, true, counts(model.TaskSucceeded, 4), model.JobSucceeded},
		{"not all created yet", false, 2, true, counts(model.TaskSucceeded, 2), model.JobRunning},
	}
	for _, tc := range cases {
		got, _ := core.DeriveJobState(spec, tc.killed, tc.created, tc.ran, tc.c)
		if got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	h := newHistogram([]float64{0.1, 1})
	for _, v := range []float64{0.05, 0.1, 0.5, 7} {
		h.Observe(v)
	}
	if got := h.Counts; len(got) != 3 || got[0] != 2 || got[1] != 1 || got[2] != 1 || h.Count != 4 || h.Sum != 7.65 {
		t.Fatalf("histogram %+v", h)
	}
	c := h.clone()
	h.Observe(0)
	if c.Counts[0] != 2 {
		t.Fatal("clone shares its counts")
	}
}
