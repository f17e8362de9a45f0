package core

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// The core's step, run on its own: no Engine, no store, no clock and no
// goroutine. Each scenario of testdata/*.txt builds a core, gives it
// hosts, jobs and plugin reports, and prints what each step decides: the
// records it writes and the launches and kills it asks for.
func TestCoreSteps(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		s := newCoreScenario(t)
		return s.run
	})
}

// coreScenario drives one core through a scenario file.
type coreScenario struct {
	t     *testing.T
	c     State
	hosts *hostmgr.HostCache
	now   time.Time
	in    PassInput
}

func newCoreScenario(t *testing.T) *coreScenario {
	plugin, err := sim.New(sim.Config{Cluster: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{Region: "test", Hosts: hostmgr.NewHostCache(), Interval: time.Second, RetryBackoff: time.Second,
		MaxRetryBackoff: time.Minute, CreateBatch: 20000, LaunchGrace: 30 * time.Second, EntitlementPeriod: time.Second}
	set.Limits.Defaults()
	s := &coreScenario{t: t, c: NewState(set, []hostmgr.Plugin{plugin}, slog.New(slog.DiscardHandler)), hosts: set.Hosts,
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.c.Pools.Set(&s.c, map[string]*model.Pool{RootPool: {Path: RootPool, Limit: Unlimited(), Share: model.EqualShares(1)}})
	tree, err := entitlement.NewTree(PoolSpecs(s.c.Pools.ByPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	s.c.Pools.SetTree(&s.c, tree)
	return s
}

func (s *coreScenario) run(c datadriven.Case) string {
	f := c.Fields()
	args := map[string]string{}
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			args[k] = v
		}
	}
	switch f[0] {
	case "host":
		return s.host(f[1], args)
	case "host-gone":
		id := model.HostID("sim/" + f[1])
		s.hosts.Remove([]model.HostID{id})
		s.in.RemovedHosts = append(s.in.RemovedHosts, id)
		s.stale(id)
		return "ok"
	case "job":
		return s.job(model.JobID(f[1]), args)
	case "status":
		st, ok := model.ParseTaskState(f[2])
		if !ok {
			s.t.Fatalf("%s: unknown state %q", c.Where, f[2])
		}
		return s.status(f[1], st, args)
	case "stop":
		je := s.c.Jobs[model.JobID(f[1])]
		if je == nil {
			return "no job " + f[1]
		}
		s.c.Stop(je)
		return "ok"
	case "stop-tasks", "restart":
		return s.instances(f[0], model.JobID(f[1]), f[2:])
	case "step":
		return s.step(args)
	}
	s.t.Fatalf("%s: unknown command %q", c.Where, f[0])
	return ""
}

func (s *coreScenario) stale(id model.HostID) {
	if s.in.StaleHosts == nil {
		s.in.StaleHosts = map[model.HostID]bool{}
	}
	s.in.StaleHosts[id] = true
	s.in.HostsMoved = true
}

// host NAME cpu=CORES mem=MB: a host of the sim cluster, reported up.
func (s *coreScenario) host(name string, args map[string]string) string {
	h := model.Host{ID: model.HostID("sim/" + name), Hostname: name, Cluster: "sim", Kind: "sim", State: model.HostUp,
		Capacity: model.Resources{MilliCPU: 1000 * atoi(s.t, args["cpu"], 4), MemMB: atoi(s.t, args["mem"], 4096)}}
	s.hosts.Update([]model.Host{h})
	s.stale(h.ID)
	return "ok"
}

// job ID instances=N cpu=CORES [type=batch|service] [sla=N]: a stored job,
// taken in.
func (s *coreScenario) job(id model.JobID, args map[string]string) string {
	spec := model.JobSpec{Name: string(id), Type: model.JobBatch, Pool: RootPool, MaxAttempts: 3,
		Instances: uint32(atoi(s.t, args["instances"], 1)),
		Task:      model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 1000 * atoi(s.t, args["cpu"], 1), MemMB: 10}}}
	if args["type"] == "service" {
		spec.Type = model.JobService
	}
	if n, ok := args["gang"]; ok {
		spec.GangSize = uint32(atoi(s.t, n, 1))
	}
	if n, ok := args["sla"]; ok {
		spec.SLA = &model.SLA{MaxUnavailable: uint32(atoi(s.t, n, 1))}
	}
	s.c.Adopt(&model.Job{ID: id, ConfigVersion: 1, Spec: spec,
		Status: model.JobStatus{State: model.JobInitialized, CreateTime: s.now}})
	return "ok"
}

// status JOB/INSTANCE STATE [exit=CODE]: the task's current run, as its
// plugin reports it.
func (s *coreScenario) status(task string, state model.TaskState, args map[string]string) string {
	job, inst, _ := strings.Cut(task, "/")
	je, tk := s.c.Task(model.TaskID{Job: model.JobID(job), Instance: uint32(atoi(s.t, inst, 0))})
	if tk == nil {
		return "no task " + task
	}
	_ = je
	s.in.Statuses = append(s.in.Statuses, hostmgr.TaskStatus{Run: tk.RunID(), Host: tk.Host, State: state,
		ExitCode: int32(atoi(s.t, args["exit"], 0)), Time: s.now})
	return "ok"
}

// stop-tasks|restart JOB I... [force]: the API's commands on instances,
// carried out by the core as the Engine does under its lock.
func (s *coreScenario) instances(cmd string, job model.JobID, words []string) string {
	var ids []uint32
	force := false
	for _, w := range words {
		if w == "force" {
			force = true
			continue
		}
		ids = append(ids, uint32(atoi(s.t, w, 0)))
	}
	s.c.Now = s.now
	var out []*model.TaskRuntime
	var err error
	if cmd == "restart" {
		out, err = s.c.Restart(job, ids, force)
	} else if je := s.c.Jobs[job]; je != nil {
		out, _, err = s.c.StopInstances(je, ids, force)
	} else {
		return "no job " + string(job)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("ok: %d tasks", len(out))
}

// step [after=DURATION]: a pass at the scenario's time (moved on by
// after), its write stored at once. It prints the records written and the
// effects asked for.
func (s *coreScenario) step(args map[string]string) string {
	if d, ok := args["after"]; ok {
		after, err := time.ParseDuration(d)
		if err != nil {
			s.t.Fatal(err)
		}
		s.now = s.now.Add(after)
	}
	s.in.Now = s.now
	w := s.c.Decide(s.in)
	s.in = PassInput{}
	// The store takes every record at its next revision.
	for _, cp := range w.Copies {
		cp.Revision++
	}
	for _, jw := range w.Jobs {
		if jw.Record != nil {
			jw.Record.Revision++
		}
	}
	var out []string
	for _, cp := range w.Copies {
		line := fmt.Sprintf("task %s/%d run %d %s", cp.ID.Job, cp.ID.Instance, cp.Run, cp.State)
		if cp.Host != "" {
			line += " on " + strings.TrimPrefix(string(cp.Host), "sim/")
		}
		if cp.Goal == model.TaskKilled {
			line += " (goal killed)"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	for _, jw := range w.Jobs {
		if jw.Record != nil {
			out = append(out, fmt.Sprintf("job %s %s", jw.Record.ID, jw.Record.Status.State))
		}
	}
	for _, ef := range w.Effects {
		switch {
		case ef.Launch != nil:
			out = append(out, fmt.Sprintf("launch %s on %s", ef.Launch.Run, strings.TrimPrefix(string(ef.Launch.Host), "sim/")))
		case ef.Kill != nil:
			out = append(out, fmt.Sprintf("kill %s", ef.Kill.Run))
		}
	}
	s.c.Settle(w, s.now)
	s.c.KeepWork()
	s.c.TakeFigures()
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, "\n")
}

func atoi(t *testing.T, s string, def int64) int64 {
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
