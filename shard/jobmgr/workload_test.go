package jobmgr

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"testing"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

func simHosts(n int) []sim.HostSpec {
	hosts := make([]sim.HostSpec, n)
	for i := range hosts {
		hosts[i] = sim.HostSpec{Name: fmt.Sprintf("h%d", i), Capacity: oneCore(1).Task.Resources.Scale(8)}
	}
	return hosts
}

// createAs creates a job of the given type.
func (s *testShard) createAs(typ model.JobType, spec model.JobSpec) model.JobID {
	s.t.Helper()
	if spec.Pool == "" {
		spec.Pool = core.RootPool
	}
	if spec.MaxAttempts == 0 {
		spec.MaxAttempts = 3
	}
	spec.Type = typ
	j, err := Do(context.Background(), s.e, CreateJob{Spec: spec})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.ID
}

func (s *testShard) allRunning(job model.JobID, n int) func() bool {
	return func() bool { return s.count(job, model.TaskRunning) == n }
}

// Named ports get distinct host ports from the host's ranges, handed to
// the task as PORT_<NAME>; fixed ports keep instances on distinct hosts;
// ports come back when runs end.
func TestPortsAreAllocatedOncePerHost(t *testing.T) {
	s := newTestShard(t, simHosts(2))
	spec := oneCore(6)
	spec.Task.Ports = []model.PortSpec{{Name: "http"}, {Name: "grpc-api"}}
	job := s.createAs(model.JobService, spec)
	s.until("6 running", s.allRunning(job, 6))
	seen := map[string]bool{}
	for _, tk := range s.tasks(job) {
		if len(tk.Ports()) != 2 {
			t.Fatalf("task %s has ports %v", tk.ID, tk.Ports())
		}
		for _, p := range tk.Ports() {
			if p.Port < 31000 || p.Port > 32000 {
				t.Errorf("task %s port %v outside the host's range", tk.ID, p)
			}
			key := fmt.Sprintf("%s:%d", tk.Host, p.Port)
			if seen[key] {
				t.Errorf("host port %s given twice", key)
			}
			seen[key] = true
		}
	}
	for _, v := range s.e.Hosts().Snapshot() {
		if v.PortsUsed == 0 {
			t.Errorf("host %s shows no ports used", v.ID)
		}
	}

	fixed := oneCore(2)
	fixed.Task.Ports = []model.PortSpec{{Name: "web", Port: 8080}}
	fj := s.createAs(model.JobService, fixed)
	s.until("fixed-port instances running", s.allRunning(fj, 2))
	ts := s.tasks(fj)
	if ts[0].Host == ts[1].Host {
		t.Fatalf("two instances with fixed port 8080 on one host %s", ts[0].Host)
	}
	third := oneCore(1)
	third.Task.Ports = []model.PortSpec{{Name: "web", Port: 8080}}
	tj := s.createAs(model.JobService, third)
	s.until("third 8080 stays unplaced", func() bool {
		ts := s.tasks(tj)
		return len(ts) == 1 && ts[0].State == model.TaskReady && ts[0].Message != ""
	})

	if _, err := Do(context.Background(), s.e, StopJob{ID: job}); err != nil {
		t.Fatal(err)
	}
	if _, err := Do(context.Background(), s.e, StopJob{ID: fj}); err != nil {
		t.Fatal(err)
	}
	s.until("third takes the freed port", s.allRunning(tj, 1))
	s.until("ports given back", func() bool {
		used := 0
		for _, v := range s.e.Hosts().Snapshot() {
			used += v.PortsUsed
		}
		return used == 0 // 8080 is outside the ranges, so it is not counted
	})
}

// A stateful instance is pinned to the host it first ran on: when its run
// ends it comes back there, with the same volume.
func TestStatefulInstanceReturnsToItsHost(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	spec := oneCore(3)
	spec.Task.Volumes = []model.Volume{{Name: "data", SizeMB: 100, Path: "/data"}}
	job := s.createAs(model.JobStateful, spec)
	s.until("3 running", s.allRunning(job, 3))
	first := s.tasks(job)
	for _, tk := range first {
		if tk.PinnedHost() != tk.Host {
			t.Fatalf("task %s runs on %s, pinned to %q", tk.ID, tk.Host, tk.PinnedHost())
		}
	}
	vols := s.sim.Volumes()
	if len(vols) != 3 {
		t.Fatalf("volumes %v", vols)
	}
	// Kill instance 0's run from under the shard (as a crash would).
	if err := s.sim.Kill(context.Background(), first[0].RunID(), first[0].Host, 0); err != nil {
		t.Fatal(err)
	}
	s.until("instance 0 runs again", func() bool {
		ts := s.tasks(job)
		return ts[0].Run > first[0].Run && ts[0].State == model.TaskRunning
	})
	again := s.tasks(job)[0]
	if again.Host != first[0].Host {
		t.Fatalf("stateful instance moved from %s to %s", first[0].Host, again.Host)
	}
	if got := s.sim.Volumes()[model.VolumeID(again.ID, "data")]; got != first[0].Host {
		t.Fatalf("volume of instance 0 on %q", got)
	}
	// Stopping keeps the volumes; deleting the job removes them.
	if _, err := Do(context.Background(), s.e, StopJob{ID: job}); err != nil {
		t.Fatal(err)
	}
	s.until("job killed", func() bool { j, _ := s.e.Reads().GetJob(job); return j.Status.State == model.JobKilled })
	if n := len(s.sim.Volumes()); n != 3 {
		t.Fatalf("a stopped job kept %d volumes, want 3", n)
	}
	if _, err := Do(context.Background(), s.e, DeleteJob{ID: job}); err != nil {
		t.Fatal(err)
	}
	if vols := s.sim.Volumes(); len(vols) != 0 {
		t.Fatalf("volumes left after the job was deleted: %v", vols)
	}
}

// A daemon job runs one instance per matching host, gains one when a host
// joins and loses the one of a drained host.
func TestDaemonFollowsHosts(t *testing.T) {
	hosts := simHosts(3)
	hosts[2].Labels = map[string]string{"role": "edge"}
	hosts[0].Labels = map[string]string{"role": "edge"}
	hosts[1].Labels = map[string]string{"role": "core"}
	s := newTestShard(t, hosts)
	spec := oneCore(0)
	spec.Task.Constraints = []model.Constraint{{Key: "role", Op: model.OpEquals, Values: []string{"edge"}}}
	job := s.createAs(model.JobDaemon, spec)
	s.until("one per edge host", s.allRunning(job, 2))
	onHost := func() map[model.HostID]int {
		m := map[model.HostID]int{}
		for _, tk := range s.tasks(job) {
			if tk.State == model.TaskRunning {
				m[tk.Host]++
				if tk.Host != tk.PinnedHost() {
					t.Errorf("daemon task %s on %s pinned to %s", tk.ID, tk.Host, tk.PinnedHost())
				}
			}
		}
		return m
	}
	if m := onHost(); m["sim/h0"] != 1 || m["sim/h2"] != 1 {
		t.Fatalf("daemon instances per host %v", m)
	}
	if err := s.sim.AddHost(sim.HostSpec{Name: "h3", Capacity: hosts[0].Capacity, Labels: map[string]string{"role": "edge"}}); err != nil {
		t.Fatal(err)
	}
	s.until("the new edge host gets one", s.allRunning(job, 3))
	if _, err := Do(context.Background(), s.e, DrainHost{Host: "sim/h0", Reason: "maintenance", Deadline: 0}); err != nil {
		t.Fatal(err)
	}
	s.until("the drained host loses its instance", func() bool {
		m := onHost()
		return m["sim/h0"] == 0 && m["sim/h2"] == 1 && m["sim/h3"] == 1
	})
	j, _ := s.e.Reads().GetJob(job)
	if j.Status.State != model.JobRunning {
		t.Fatalf("daemon job %s", j.Status.State)
	}
	if _, err := Do(context.Background(), s.e, UndrainHost{Host: "sim/h0"}); err != nil {
		t.Fatal(err)
	}
	s.until("h0 is back with a new instance", func() bool { return onHost()["sim/h0"] == 1 })
	if n := len(s.tasks(job)); n != 4 {
		t.Fatalf("daemon made %d instances, want 4 (instance numbers are not reused)", n)
	}
}

// Health reported by the host manager shows on the task; an unhealthy
// service instance is restarted, a batch task is not.
func TestUnhealthyServiceInstanceRestarts(t *testing.T) {
	s := newTestShard(t, simHosts(2))
	spec := oneCore(2)
	spec.Task.HealthCheck = &model.HealthCheck{Kind: model.ProbeTCP, Port: "http"}
	spec.Task.Ports = []model.PortSpec{{Name: "http"}}
	job := s.createAs(model.JobService, spec)
	s.until("2 healthy", func() bool {
		n := 0
		for _, tk := range s.tasks(job) {
			if tk.State == model.TaskRunning && tk.Health == model.HealthHealthy {
				n++
			}
		}
		return n == 2
	})
	batch := s.createAs(model.JobBatch, spec)
	s.until("batch running", s.allRunning(batch, 2))
	sick := s.tasks(job)[1]
	if err := s.sim.SetHealth(sick.RunID(), model.HealthUnhealthy); err != nil {
		t.Fatal(err)
	}
	bt := s.tasks(batch)[0]
	if err := s.sim.SetHealth(bt.RunID(), model.HealthUnhealthy); err != nil {
		t.Fatal(err)
	}
	s.until("the unhealthy instance runs again, healthy", func() bool {
		tk := s.tasks(job)[1]
		return tk.Run > sick.Run && tk.State == model.TaskRunning && tk.Health == model.HealthHealthy
	})
	s.until("the batch task shows UNHEALTHY and keeps its run", func() bool {
		tk := s.tasks(batch)[0]
		return tk.Health == model.HealthUnhealthy && tk.Run == bt.Run && tk.State == model.TaskRunning
	})
	one := uint32(1)
	s.until("an event of instance 1 carries reason "+model.ReasonUnhealthy, func() bool {
		evs, err := s.e.Reads().ListEvents(context.Background(), store.EventQuery{Job: job, Instance: &one})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Task != nil && ev.Task.Reason == model.ReasonUnhealthy {
				return true
			}
		}
		return false
	})
}

// recordingPlugin is the sim plugin, keeping every launch it was given.
type recordingPlugin struct {
	*sim.Plugin
	launches chan hostmgr.Launch
}

func (r *recordingPlugin) Launch(ctx context.Context, ls []hostmgr.Launch) error {
	for _, l := range ls {
		r.launches <- l
	}
	return r.Plugin.Launch(ctx, ls)
}

// Every member of a placed gang learns the gang: hosts, ports and its own
// place, in its environment and as the list plugins write to a file.
func TestGangMembersKnowEachOther(t *testing.T) {
	s := newTestShard(t, simHosts(4))
	rec := &recordingPlugin{Plugin: s.sim, launches: make(chan hostmgr.Launch, 64)}
	s.e.c.Plugins["sim"] = rec
	spec := oneCore(4)
	spec.GangSize = 4
	spec.Task.Ports = []model.PortSpec{{Name: "rpc"}}
	spec.Task.Resources = spec.Task.Resources.Scale(8) // one member per host
	job := s.create(spec)
	s.until("gang running", s.allRunning(job, 4))
	hosts := map[model.HostID]bool{}
	for range 4 {
		l := <-rec.launches
		if len(l.Gang) != 4 {
			t.Fatalf("launch %s carries %d gang members", l.Run, len(l.Gang))
		}
		var fromEnv []hostmgr.GangMember
		if err := json.Unmarshal([]byte(l.Env["PELOTON_GANG"]), &fromEnv); err != nil || len(fromEnv) != 4 {
			t.Fatalf("PELOTON_GANG %q: %v", l.Env["PELOTON_GANG"], err)
		}
		for _, m := range l.Gang {
			if m.Host == "" || len(m.Ports) != 1 || m.Ports[0].Port == 0 {
				t.Fatalf("gang member %+v lacks its host or port", m)
			}
		}
		if l.Env["PELOTON_GANG_SIZE"] != "4" || l.Env["PORT_RPC"] == "" || l.Env["PELOTON_JOB_ID"] != string(job) {
			t.Fatalf("env %v", l.Env)
		}
		hosts[l.Host] = true
	}
	if len(hosts) != 4 {
		t.Fatalf("gang on %d hosts", len(hosts))
	}
}

// A daemon job takes a new config by a rolling update like a service.
func TestDaemonRollingUpdate(t *testing.T) {
	s := newTestShard(t, simHosts(3))
	job := s.createAs(model.JobDaemon, oneCore(0))
	s.until("one per host", s.allRunning(job, 3))
	j, _ := s.e.Reads().GetJob(job)
	next := j.Spec
	next.Instances = 0
	next.Task.Env = map[string]string{"V": "2"}
	if _, err := Do(context.Background(), s.e, UpdateJob{Job: job, Spec: next, Options: UpdateOptions{BatchSize: 1}}); err != nil {
		t.Fatal(err)
	}
	s.until("all on config 2", func() bool {
		n := 0
		for _, tk := range s.tasks(job) {
			if tk.State == model.TaskRunning && tk.ConfigVersion == 2 {
				n++
			}
		}
		return n == 3
	})
	if n := len(s.tasks(job)); n != 3 {
		t.Fatalf("daemon has %d instances after the update, want 3", n)
	}
}
