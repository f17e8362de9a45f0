package maintenance

import (
	"reflect"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// instances is a job's SLA view: ids 0..n-1 available, except those listed
// as down.

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func instances(n uint32, down ...uint32) []sla.Instance {
	out := make([]sla.Instance, n)
	for i := range out {
		out[i] = sla.Instance{ID: uint32(i), Available: true}
	}
	for _, d := range down {
		out[d].Available = false
	}
	return out
}

func run(job string, inst uint32, host string, ty model.JobType) DrainRun {
	return DrainRun{Job: model.JobID(job), Instance: inst, Host: model.HostID(host), Type: ty, Gang: []uint32{inst}}
}

func revocable(r DrainRun) DrainRun             { r.Revocable = true; return r }
func restartingRun(r DrainRun) DrainRun         { r.Restarting = true; return r }
func inGang(r DrainRun, ids ...uint32) DrainRun { r.Gang = ids; return r }

func act(k DrainKind, job string, inst uint32, host, msg string) DrainAction {
	a := DrainAction{Kind: k, Job: model.JobID(job), Instance: inst, Host: model.HostID(host), Message: msg}
	if k == DrainMove || k == DrainKill {
		a.Reason = ReasonHostDrained
	}
	return a
}

func TestDrain(t *testing.T) {
	now := t0
	h1 := DrainHost{ID: "c/h1", Tasks: 1}
	h2 := DrainHost{ID: "c/h2", Tasks: 1}
	withDeadline := func(h DrainHost, d time.Duration) DrainHost { h.Deadline = now.Add(d); return h }
	down := func(h DrainHost) DrainHost { h.Down = true; return h }
	web := func(limit uint32, view []sla.Instance) map[model.JobID]*sla.Job {
		return map[model.JobID]*sla.Job{"web": {Limit: limit, Instances: view}}
	}
	const (
		draining1 = "host c/h1 is draining"
		draining2 = "host c/h2 is draining"
		moving1   = draining1 + "; moving elsewhere"
		moving2   = draining2 + "; moving elsewhere"
	)
	cases := []struct {
		name    string
		hosts   []DrainHost
		runs    []DrainRun
		sla     map[model.JobID]*sla.Job
		want    []DrainAction
		drained []model.HostID
	}{
		{name: "nothing draining"},
		{name: "empty host is drained", hosts: []DrainHost{{ID: "c/h1"}},
			drained: []model.HostID{"c/h1"}},
		{name: "host with runs of jobs not given is not drained", hosts: []DrainHost{{ID: "c/h1", Tasks: 2}}},
		{name: "host the runs name is not drained even if the count says so", hosts: []DrainHost{{ID: "c/h1"}},
			runs: []DrainRun{run("b", 0, "c/h1", model.JobBatch)},
			want: []DrainAction{act(DrainLetRun, "b", 0, "c/h1", draining1+"; a batch run finishes")}},
		{name: "run on a host not draining is left alone", hosts: []DrainHost{h1},
			runs: []DrainRun{run("web", 0, "c/h9", model.JobService)}, sla: web(1, instances(3))},

		// Services move under their SLA.
		{name: "service moves when the SLA has room", hosts: []DrainHost{h1},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService)}, sla: web(1, instances(3)),
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1)}},
		{name: "stateful moves like a service", hosts: []DrainHost{h1},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobStateful)}, sla: web(1, instances(3)),
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1)}},
		{name: "service waits when the SLA is spent", hosts: []DrainHost{h1},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService)}, sla: web(1, instances(3, 2)),
			want: []DrainAction{act(DrainHold, "web", 0, "c/h1", draining1+"; waiting for SLA: 1/1 unavailable")}},
		{name: "an instance already down moves whatever the SLA", hosts: []DrainHost{h1},
			runs: []DrainRun{run("web", 2, "c/h1", model.JobService)}, sla: web(1, instances(3, 0, 2)),
			want: []DrainAction{act(DrainMove, "web", 2, "c/h1", moving1)}},
		{name: "limit one: the first moves, the second waits", hosts: []DrainHost{h1, h2},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService), run("web", 1, "c/h2", model.JobService)},
			sla:  web(1, instances(3)),
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1), act(DrainHold, "web", 1, "c/h2", draining2+"; waiting for SLA: 1/1 unavailable")}},
		{name: "limit two: both move", hosts: []DrainHost{h1, h2},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService), run("web", 1, "c/h2", model.JobService)},
			sla:  web(2, instances(3)),
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1), act(DrainMove, "web", 1, "c/h2", moving2)}},
		{name: "no SLA known: waits", hosts: []DrainHost{h1},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService)},
			want: []DrainAction{act(DrainHold, "web", 0, "c/h1", draining1+"; no SLA known for the job")}},
		{name: "jobs have their own budgets", hosts: []DrainHost{h1, h2},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService), run("api", 0, "c/h2", model.JobService)},
			sla:  map[model.JobID]*sla.Job{"web": {Limit: 1, Instances: instances(2)}, "api": {Limit: 1, Instances: instances(2)}},
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1), act(DrainMove, "api", 0, "c/h2", moving2)}},

		// Revocable work and forced downs.
		{name: "revocable is killed at once, SLA or not", hosts: []DrainHost{h1},
			runs: []DrainRun{revocable(run("web", 0, "c/h1", model.JobService))}, sla: web(0, instances(3)),
			want: []DrainAction{act(DrainKill, "web", 0, "c/h1", draining1+"; revocable work stops at once")}},
		{name: "revocable batch is killed before the deadline", hosts: []DrainHost{withDeadline(h1, time.Hour)},
			runs: []DrainRun{revocable(run("b", 0, "c/h1", model.JobBatch))},
			want: []DrainAction{act(DrainKill, "b", 0, "c/h1", draining1+"; revocable work stops at once")}},
		{name: "host down kills a service whatever its SLA", hosts: []DrainHost{down(h1)},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService)}, sla: web(0, instances(3)),
			want: []DrainAction{act(DrainKill, "web", 0, "c/h1", "host c/h1 is marked down")}},
		{name: "host down kills a daemon and a batch run", hosts: []DrainHost{down(h1)},
			runs: []DrainRun{run("d", 0, "c/h1", model.JobDaemon), run("b", 0, "c/h1", model.JobBatch)},
			want: []DrainAction{act(DrainKill, "d", 0, "c/h1", "host c/h1 is marked down"), act(DrainKill, "b", 0, "c/h1", "host c/h1 is marked down")}},
		{name: "a kill counts against the SLA of later moves", hosts: []DrainHost{down(h1), h2},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService), run("web", 1, "c/h2", model.JobService)},
			sla:  web(1, instances(3)),
			want: []DrainAction{act(DrainKill, "web", 0, "c/h1", "host c/h1 is marked down"), act(DrainHold, "web", 1, "c/h2", draining2+"; waiting for SLA: 1/1 unavailable")}},

		// Daemons and batch runs.
		{name: "daemon runs on", hosts: []DrainHost{h1},
			runs: []DrainRun{run("d", 0, "c/h1", model.JobDaemon)}, sla: map[model.JobID]*sla.Job{"d": {Limit: 1, Instances: instances(1)}},
			want: []DrainAction{act(DrainLetRun, "d", 0, "c/h1", draining1+"; the daemon stops its instance itself")}},
		{name: "batch without deadline finishes", hosts: []DrainHost{h1},
			runs: []DrainRun{run("b", 0, "c/h1", model.JobBatch)},
			want: []DrainAction{act(DrainLetRun, "b", 0, "c/h1", draining1+"; a batch run finishes")}},
		{name: "batch before the deadline finishes", hosts: []DrainHost{withDeadline(h1, 5*time.Minute)},
			runs: []DrainRun{run("b", 0, "c/h1", model.JobBatch)},
			want: []DrainAction{act(DrainLetRun, "b", 0, "c/h1", draining1+"; a batch run may finish within 5m0s")}},
		{name: "batch at the deadline is killed", hosts: []DrainHost{withDeadline(h1, 0)},
			runs: []DrainRun{run("b", 0, "c/h1", model.JobBatch)},
			want: []DrainAction{act(DrainKill, "b", 0, "c/h1", draining1+"; its deadline passed")}},
		{name: "batch past the deadline is killed", hosts: []DrainHost{withDeadline(h1, -time.Second)},
			runs: []DrainRun{run("b", 0, "c/h1", model.JobBatch)},
			want: []DrainAction{act(DrainKill, "b", 0, "c/h1", draining1+"; its deadline passed")}},
		{name: "the deadline does not hurry a service past its SLA", hosts: []DrainHost{withDeadline(h1, -time.Second)},
			runs: []DrainRun{run("web", 0, "c/h1", model.JobService)}, sla: web(0, instances(2)),
			want: []DrainAction{act(DrainHold, "web", 0, "c/h1", draining1+"; waiting for SLA: 0/0 unavailable")}},

		// Gangs.
		{name: "a gang is taken down once", hosts: []DrainHost{down(h1), down(h2)},
			runs: []DrainRun{inGang(run("g", 0, "c/h1", model.JobBatch), 0, 1), inGang(run("g", 1, "c/h2", model.JobBatch), 0, 1)},
			want: []DrainAction{act(DrainKill, "g", 0, "c/h1", "host c/h1 is marked down")}},
		{name: "a service gang larger than its limit moves whole when nothing else is down", hosts: []DrainHost{h1},
			runs: []DrainRun{inGang(run("web", 0, "c/h1", model.JobService), 0, 1)}, sla: web(1, instances(4)),
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1)}},
		{name: "a service gang larger than its limit waits while another instance is down", hosts: []DrainHost{h1},
			runs: []DrainRun{inGang(run("web", 0, "c/h1", model.JobService), 0, 1)}, sla: web(1, instances(4, 3)),
			want: []DrainAction{act(DrainHold, "web", 0, "c/h1", draining1+"; waiting for SLA: 1/1 unavailable")}},
		{name: "a service gang moves whole within the budget", hosts: []DrainHost{h1, h2},
			runs: []DrainRun{inGang(run("web", 0, "c/h1", model.JobService), 0, 1), inGang(run("web", 1, "c/h2", model.JobService), 0, 1),
				inGang(run("web", 2, "c/h2", model.JobService), 2, 3)},
			sla:  web(2, instances(4)),
			want: []DrainAction{act(DrainMove, "web", 0, "c/h1", moving1), act(DrainHold, "web", 2, "c/h2", draining2+"; waiting for SLA: 2/2 unavailable")}},
		{name: "a gang being restarted is left alone", hosts: []DrainHost{h1},
			runs: []DrainRun{restartingRun(run("web", 0, "c/h1", model.JobService))}, sla: web(1, instances(2))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Drain(DrainInput{Now: now, Hosts: c.hosts, Runs: c.runs, SLA: c.sla})
			if !reflect.DeepEqual(got.Actions, c.want) {
				t.Errorf("actions\n got %+v\nwant %+v", got.Actions, c.want)
			}
			if !reflect.DeepEqual(got.Drained, c.drained) {
				t.Errorf("drained %v, want %v", got.Drained, c.drained)
			}
		})
	}
}

// Drain works on copies: the SLA views given stay as they were.
func TestDrainLeavesItsInputAlone(t *testing.T) {
	view := instances(3)
	in := DrainInput{
		Now:   t0,
		Hosts: []DrainHost{{ID: "c/h1", Tasks: 2}},
		Runs:  []DrainRun{run("web", 0, "c/h1", model.JobService), run("web", 1, "c/h1", model.JobService)},
		SLA:   map[model.JobID]*sla.Job{"web": {Limit: 2, Instances: view}},
	}
	first := Drain(in)
	for _, v := range view {
		if v.Disrupted {
			t.Fatalf("view changed: %+v", view)
		}
	}
	if second := Drain(in); !reflect.DeepEqual(first, second) {
		t.Fatalf("two answers:\n%+v\n%+v", first, second)
	}
	if len(first.Actions) != 2 || first.Actions[1].Kind != DrainMove {
		t.Fatalf("both should move: %+v", first.Actions)
	}
}
