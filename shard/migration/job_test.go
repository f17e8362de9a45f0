package migration

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

func migrationOf(state model.MigrationState, jobs ...model.MigrationJob) *model.Migration {
	return &model.Migration{ID: "m", To: "k8s", State: state, Jobs: jobs}
}

func run(i, failures uint32, st model.TaskState, msg string) *model.TaskRuntime {
	return &model.TaskRuntime{ID: model.TaskID{Job: "j", Instance: i}, Failures: failures, State: st, Message: msg}
}

// A moving gang's failures count from when it started moving: into the
// record once each, into the gang for the step; waiting for a host is
// timed from the first pass that saw it unplaced.
func TestWatchCountsFailuresAndWaiting(t *testing.T) {
	m := migrationOf(model.MigrationMigrating, model.MigrationJob{Job: "j", From: "mesos"})
	j := NewJob(m, &m.Jobs[0])
	j.StartMoving(run(0, 2, model.TaskRunning, ""))
	j.TookDown(0)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	g := Gang{Gang: 0, Size: 1, Place: Unplaced, Move: j.Move(0)}
	j.Watch(&g, []*model.TaskRuntime{run(0, 3, model.TaskPending, "0/2 hosts fit")}, now)
	if g.Failures != 1 || g.Why != "0/2 hosts fit" || g.PendingFor != 0 || g.Move != Restarted {
		t.Fatalf("first pass: %+v", g)
	}
	if j.Rec.Failures != 1 || j.Rec.Retries != 1 {
		t.Fatalf("record after one failure: %+v", *j.Rec)
	}
	g = Gang{Gang: 0, Size: 1, Place: Unplaced}
	j.Watch(&g, []*model.TaskRuntime{run(0, 3, model.TaskPending, "")}, now.Add(90*time.Second))
	if g.Failures != 1 || g.PendingFor != 90*time.Second || j.Rec.Failures != 1 {
		t.Fatalf("second pass, no new failure: gang %+v, record %+v", g, *j.Rec)
	}
	// Resumed by an operator, failures and waiting count afresh.
	j.Resumed()
	g = Gang{Gang: 0, Size: 1, Place: PlacedOnTarget}
	j.Watch(&g, []*model.TaskRuntime{run(0, 3, model.TaskRunning, "")}, now.Add(2*time.Minute))
	if g.Failures != 0 || g.PendingFor != 0 {
		t.Fatalf("after resume: %+v", g)
	}
	j.Arrived(0, []uint32{0})
	if len(j.Rec.Moving) != 0 || !j.Rec.IsMoved(0) || j.Move(0) != Pinned {
		t.Fatalf("arrived: %+v", *j.Rec)
	}
}

// Rolling back concerns only what the migration moved, moves instances
// back to where they came from, and takes them out of the moved set.
func TestRollingBack(t *testing.T) {
	m := migrationOf(model.MigrationRollingBack, model.MigrationJob{Job: "j", From: "mesos"})
	m.Jobs[0].AddMoved(3)
	j := NewJob(m, &m.Jobs[0])
	if j.To != "mesos" || !j.Concerns(3) || j.Concerns(2) {
		t.Fatalf("rolling back: to %s, concerns 3 %v, 2 %v", j.To, j.Concerns(3), j.Concerns(2))
	}
	j.Arrived(3, []uint32{3})
	if j.Rec.IsMoved(3) {
		t.Fatal("an instance back on its cluster is still moved")
	}
}

func TestReport(t *testing.T) {
	cases := []struct {
		name       string
		paused     bool
		message    string
		plan       Plan
		want       string
		done       bool
		wantPaused bool
		stopped    bool
	}{
		{name: "waiting", plan: Plan{Waiting: "waiting for SLA: 1/1 unavailable", InFlight: 1, Total: 4},
			want: "waiting for SLA: 1/1 unavailable"},
		{name: "stuck stops it", plan: Plan{Stuck: "instance 0 failed 3 times on the target", Waiting: "stopped: instance 0 failed 3 times on the target"},
			want: "stopped: instance 0 failed 3 times on the target", wantPaused: true, stopped: true},
		{name: "a stopped migration keeps saying why while paused", paused: true, message: "stopped: no host",
			plan: Plan{Waiting: "paused"}, want: "stopped: no host", wantPaused: true},
		{name: "paused with nothing to say", paused: true, plan: Plan{}, want: "paused", wantPaused: true},
		{name: "complete", plan: Plan{Done: 4, Total: 4, Complete: true}, want: "4 instances on k8s", done: true},
	}
	for _, c := range cases {
		m := migrationOf(model.MigrationMigrating, model.MigrationJob{Job: "j", Message: c.message})
		m.Paused = c.paused
		j := NewJob(m, &m.Jobs[0])
		stopped := j.Report(c.plan)
		rec := m.Jobs[0]
		if rec.Message != c.want || rec.Done != c.done || m.Paused != c.wantPaused || stopped != c.stopped ||
			rec.InFlight != c.plan.InFlight || rec.Instances != c.plan.Total {
			t.Errorf("%s: record %+v, paused %v, stopped %v", c.name, rec, m.Paused, stopped)
		}
	}
}

func TestSummarize(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	m := migrationOf(model.MigrationMigrating,
		model.MigrationJob{Job: "a", Done: true, Moved: []uint32{0, 1}},
		model.MigrationJob{Job: "b", Message: "waiting for SLA: 1/1 unavailable"})
	if Summarize(m, now) || m.Message != "job b: waiting for SLA: 1/1 unavailable" || m.State != model.MigrationMigrating {
		t.Fatalf("one job left: %v %q", m.State, m.Message)
	}
	m.Jobs[1].Done = true
	if !Summarize(m, now) || m.State != model.MigrationSucceeded || m.Message != "2 instances moved to k8s" || !m.CompletionTime.Equal(now) {
		t.Fatalf("all done: %v %q %v", m.State, m.Message, m.CompletionTime)
	}
	back := migrationOf(model.MigrationRollingBack, model.MigrationJob{Job: "a", Done: true})
	if !Summarize(back, now) || back.State != model.MigrationRolledBack || back.Message != "every moved instance is back" {
		t.Fatalf("rolled back: %v %q", back.State, back.Message)
	}
}

func TestWhere(t *testing.T) {
	on := func(st model.TaskState, cluster string) *model.TaskRuntime {
		return &model.TaskRuntime{State: st, Cluster: cluster}
	}
	cases := []struct {
		name    string
		members []*model.TaskRuntime
		live    []bool
		want    GangPlace
	}{
		{"all ended", []*model.TaskRuntime{on(model.TaskSucceeded, "mesos")}, []bool{false}, Finished},
		{"one elsewhere", []*model.TaskRuntime{on(model.TaskRunning, "k8s"), on(model.TaskRunning, "mesos")}, []bool{true, true}, PlacedElsewhere},
		{"none placed", []*model.TaskRuntime{on(model.TaskPending, ""), on(model.TaskPending, "")}, []bool{true, true}, Unplaced},
		{"partly on the target", []*model.TaskRuntime{on(model.TaskRunning, "k8s"), on(model.TaskPending, "")}, []bool{true, true}, PlacedPartly},
		{"on the target", []*model.TaskRuntime{on(model.TaskLaunching, "k8s"), on(model.TaskSucceeded, "mesos")}, []bool{true, false}, PlacedOnTarget},
	}
	for _, c := range cases {
		var w Where
		for i, t := range c.members {
			w.Add(t, c.live[i], "k8s")
		}
		if got := w.Place(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
