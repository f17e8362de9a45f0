package jobmgr

import (
	"context"
	"errors"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// newClusterShard starts an engine over two simulated clusters, "old"
// (4 hosts of 4 cores) and "new" (newHosts hosts of 4 cores).
func newClusterShard(t *testing.T, st store.Store, clk *clock.Fake, newHosts int) *testShard {
	t.Helper()
	spec := func(n int) []sim.HostSpec {
		var out []sim.HostSpec
		for i := range n {
			out = append(out, sim.HostSpec{Name: "h" + string(rune('0'+i)), Capacity: model.Resources{MilliCPU: 4000, MemMB: 4000}})
		}
		return out
	}
	var plugins []hostmgr.Plugin
	for _, c := range []struct {
		name string
		n    int
	}{{"old", 4}, {"new", newHosts}} {
		p, err := sim.New(sim.Config{Cluster: c.name, Hosts: spec(c.n), Clock: clk, DefaultDuration: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, p)
	}
	e := New(Config{Region: "test", Store: st, Plugins: plugins, Clock: clk, EventRetention: 10 * 365 * 24 * time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	s := &testShard{t: t, e: e, sim: plugins[0].(*sim.Plugin), clk: clk, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- e.Run(ctx) }()
	t.Cleanup(s.stop)
	<-e.Ready()
	s.until("hosts of both clusters", func() bool {
		n := 0
		for _, v := range e.Hosts().Snapshot() {
			if v.State == model.HostUp {
				n++
			}
		}
		return n == 4+newHosts
	})
	return s
}

// perCluster counts a job's runs holding a host, per cluster.
func (s *testShard) perCluster(j model.JobID) map[string]int {
	out := map[string]int{}
	for _, tk := range s.tasks(j) {
		if tk.State.HoldsResources() {
			out[tk.Cluster]++
		}
	}
	return out
}

func (s *testShard) migration(id model.MigrationID) *model.Migration {
	s.t.Helper()
	m, err := s.e.Reads().GetMigration(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// serviceOn starts a service of n half-core instances on cluster "old".
func (s *testShard) serviceOn(n uint32, sla uint32) model.JobID {
	spec := model.JobSpec{Name: "web", Instances: n, SLA: &model.SLA{MaxUnavailable: sla},
		Task:     model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 500, MemMB: 10}},
		Clusters: &model.ClusterPolicy{Avoid: []string{"sim:new"}}}
	j := s.service(spec)
	s.until("all running on old", func() bool { return s.perCluster(j)["old"] == int(n) && s.count(j, model.TaskRunning) == int(n) })
	return j
}

// A job's avoided clusters are never used; its preferred ones are tried
// first and any other cluster after; a job's policy overrides its pool's.
func TestClusterPolicySteersPlacement(t *testing.T) {
	ctx := context.Background()
	s := newClusterShard(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 1)
	if err := s.e.clusters.setPoolPolicy(ctx, core.RootPool, &model.ClusterPolicy{Avoid: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	// The pool avoids old: 6 one-core tasks, 4 fit on new, 2 wait.
	pooled := s.create(oneCore(6))
	s.until("4 on new", func() bool { return s.perCluster(pooled)["new"] == 4 })
	waiting := ""
	s.until("the others say why", func() bool {
		for _, tk := range s.tasks(pooled) {
			if !tk.State.HoldsResources() && strings.Contains(tk.Message, "4 in avoided clusters [old]") {
				waiting = tk.Message
				return true
			}
		}
		return false
	})
	if got := s.perCluster(pooled); got["old"] != 0 {
		t.Fatalf("runs on an avoided cluster: %v (%s)", got, waiting)
	}
	// A job's own policy overrides the pool's: it prefers new, which is
	// full, and falls back to old.
	spec := oneCore(3)
	spec.Clusters = &model.ClusterPolicy{Prefer: []string{"sim:new"}}
	own := s.create(spec)
	s.until("3 placed on old", func() bool { return s.perCluster(own)["old"] == 3 })
}

// A migration without surge moves a service's instances to the target a
// batch at a time within its SLA; the report counts them; a rollback
// brings them back the same way.
func TestMigrationMovesAServiceAndRollsBack(t *testing.T) {
	ctx := context.Background()
	s := newClusterShard(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 4)
	j := s.serviceOn(8, 2)
	w := s.watchAvailability(j, 8)
	m, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: j, To: "sim:new", BatchSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if m.State != model.MigrationMigrating || len(m.Jobs) != 1 || m.Jobs[0].From != "old" || m.To != "new" {
		t.Fatalf("started migration: %+v", m)
	}
	s.until("migration succeeded", func() bool { return s.migration(m.ID).State == model.MigrationSucceeded })
	down, _ := w.stop(s, "")
	if down > 2 {
		t.Errorf("%d instances down at once with maxUnavailable 2", down)
	}
	s.until("all running on new", func() bool { return s.perCluster(j)["new"] == 8 })
	got := s.migration(m.ID)
	rec := got.Jobs[0]
	if len(rec.Moved) != 8 || rec.Instances != 8 || rec.MaxUnavailable > 2 || rec.SLAMaxUnavailable != 2 || !rec.Done {
		t.Fatalf("report: %+v", rec)
	}
	job, _ := s.e.Reads().GetJob(j)
	if p := job.Spec.Clusters; p == nil || p.Prefer[0] != "new" || !strings.Contains(strings.Join(p.Avoid, ","), "old") {
		t.Fatalf("job's cluster policy after the migration: %+v", p)
	}

	// Rollback of a finished migration whose source is drained is refused.
	if _, err := Do(ctx, s.e, SetClusterDrained{Cluster: "old", Drained: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Do(ctx, s.e, RollbackMigration{ID: m.ID}); !errors.Is(err, core.ErrClusterDrained) {
		t.Fatalf("rollback onto a drained cluster: %v", err)
	}
	if _, err := Do(ctx, s.e, SetClusterDrained{Cluster: "old", Drained: false}); err != nil {
		t.Fatal(err)
	}
	w = s.watchAvailability(j, 8)
	if _, err := Do(ctx, s.e, RollbackMigration{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	s.until("rolled back", func() bool { return s.migration(m.ID).State == model.MigrationRolledBack })
	down, _ = w.stop(s, "")
	if down > 2 {
		t.Errorf("%d instances down at once during the rollback", down)
	}
	s.until("all running on old", func() bool { return s.perCluster(j)["old"] == 8 })
	job, _ = s.e.Reads().GetJob(j)
	if p := job.Spec.Clusters; p == nil || len(p.Prefer) != 0 || p.Avoid[0] != "sim:new" {
		t.Fatalf("job's cluster policy after the rollback: %+v", p)
	}
}

// With surge, each instance's replacement starts on the target first: the
// job never has fewer available instances than it should, grows by at
// most the batch, and ends with its own instance count.
func TestSurgeMigrationKeepsAvailability(t *testing.T) {
	ctx := context.Background()
	s := newClusterShard(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 4)
	j := s.serviceOn(6, 1)
	var mu sync.Mutex
	maxDown, maxTasks := 0, 0
	s.e.mu.Lock()
	s.e.afterStep = func() {
		je := s.e.c.Jobs[j]
		avail := 0
		for _, t := range je.Tasks {
			if sla.Available(t) && t.Goal != model.TaskKilled && s.e.c.Queue.Restarting[core.GangOf(je, t.ID.Instance)] == nil {
				avail++
			}
		}
		mu.Lock()
		maxDown, maxTasks = max(maxDown, 6-min(6, avail)), max(maxTasks, len(je.Tasks))
		mu.Unlock()
	}
	s.e.mu.Unlock()
	m, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: j, To: "new", BatchSize: 2, Surge: true}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("migration succeeded", func() bool { return s.migration(m.ID).State == model.MigrationSucceeded })
	s.until("six instances on new", func() bool {
		return s.perCluster(j)["new"] == 6 && len(s.tasks(j)) == 6
	})
	s.e.mu.Lock()
	s.e.afterStep = nil
	s.e.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if maxDown > 1 {
		t.Errorf("%d instances unavailable at once with maxUnavailable 1 and surge", maxDown)
	}
	if maxTasks > 8 {
		for _, tk := range s.tasks(j) {
			t.Logf("%s run %d %s %s goal %s %s", tk.ID, tk.Run, tk.State, tk.Cluster, tk.Goal, tk.Message)
		}
		t.Errorf("the job grew to %d instances, more than 6 + batch 2", maxTasks)
	}
	if rec := s.migration(m.ID).Jobs[0]; len(rec.Moved) != 6 || len(rec.Surge) != 0 {
		t.Fatalf("report: %+v", rec)
	}
}

// Bad input changes nothing; a migration can be paused, resumed and
// aborted; it survives a new leader.
func TestMigrationControlAndRefusals(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newClusterShard(t, st, clk, 4)
	j := s.serviceOn(6, 1)

	for _, c := range []struct {
		req  core.MigrationRequest
		want error
		text string
	}{
		{core.MigrationRequest{Job: j, To: "nowhere"}, core.ErrInvalid, "to_cluster"},
		{core.MigrationRequest{Job: j, To: "mesos:new"}, core.ErrInvalid, "to_cluster"},
		{core.MigrationRequest{To: "new"}, core.ErrInvalid, "job_id"},
		{core.MigrationRequest{Job: "ghost", To: "new"}, core.ErrNotFound, "ghost"},
		{core.MigrationRequest{Pool: "/nope", To: "new"}, core.ErrNotFound, "/nope"},
	} {
		if _, err := Do(ctx, s.e, StartMigration{MigrationRequest: c.req}); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("StartMigration(%+v): %v, want %v naming %s", c.req, err, c.want, c.text)
		}
	}
	// Too big for the target.
	big := s.service(model.JobSpec{Name: "big", Instances: 1, Task: model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 3000, MemMB: 10}}})
	s.until("big runs", func() bool { return s.count(big, model.TaskRunning) == 1 })
	_ = big
	huge := model.JobSpec{Name: "huge", Instances: 1, Task: model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 3500, MemMB: 10}},
		Clusters: &model.ClusterPolicy{Avoid: []string{"new"}}}
	h := s.service(huge)
	s.until("huge runs", func() bool { return s.count(h, model.TaskRunning) == 1 })
	// Paused, so that it is still running for the refusals below (an
	// instance that does not run would be moved by the first pass).
	if _, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: h, To: "new", BatchSize: 1, StartPaused: true}}); err != nil {
		t.Fatalf("a job that fits: %v", err)
	}
	if _, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: h, To: "new"}}); !errors.Is(err, core.ErrMigrationConflict) {
		t.Fatalf("a second migration of a job: %v", err)
	}
	if _, err := Do(ctx, s.e, UpdateJob{Job: h, Spec: huge, Options: UpdateOptions{}}); !errors.Is(err, core.ErrMigrationConflict) {
		t.Fatalf("an update of a job being migrated: %v", err)
	}
	if _, err := Do(ctx, s.e, SetClusterDrained{Cluster: "new", Drained: true}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.e.Reads().GetCluster("new"); err != nil || !c.Drained {
		t.Fatalf("the drained cluster: %+v %v", c, err)
	}
	if cs := s.e.Reads().ListClusters(); len(cs) != 2 {
		t.Fatalf("clusters: %d, want 2", len(cs))
	}
	if _, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: j, To: "new"}}); !errors.Is(err, core.ErrClusterDrained) {
		t.Fatalf("a migration onto a drained cluster: %v", err)
	}
	if _, err := Do(ctx, s.e, SetClusterDrained{Cluster: "new", Drained: false}); err != nil {
		t.Fatal(err)
	}
	if ms, _ := s.e.Reads().ListMigrations(ctx); len(ms) != 1 {
		t.Fatalf("refused migrations were stored: %d", len(ms))
	}

	s.e.mu.Lock()
	s.e.c.Migrations.StallAfter = 5 * time.Second
	s.e.mu.Unlock()
	m, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: j, To: "new", BatchSize: 1, StartPaused: true}})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		s.tick()
	}
	if got := s.perCluster(j); got["new"] != 0 {
		t.Fatalf("a paused migration moved instances: %v", got)
	}
	// The target closes: the first instance moved finds no host there, and
	// the migration stops with the reason.
	if _, err := Do(ctx, s.e, SetClusterDrained{Cluster: "new", Drained: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Do(ctx, s.e, ResumeMigration{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	s.until("stopped", func() bool { return s.migration(m.ID).Paused })
	got := s.migration(m.ID)
	if !strings.Contains(got.Message, "found no host on the target for 5s") || !strings.Contains(got.Message, "4 host unschedulable") {
		t.Fatalf("stopped migration: %q", got.Message)
	}
	if rec := got.Jobs[0]; rec.InFlight != 1 || rec.MaxUnavailable != 1 {
		t.Fatalf("stopped migration's report: %+v", rec)
	}
	s.stop()

	// A new leader takes it up from the store, stopped as it was.
	s2 := newClusterShard(t, st, clk, 4)
	for range 20 {
		s2.tick()
	}
	// (The simulated clusters of the new leader lost every run: the
	// instances wait, the migration stays stopped.)
	if got := s2.migration(m.ID); !got.Paused || got.State != model.MigrationMigrating || !strings.Contains(got.Message, "stopped: instance 0") {
		t.Fatalf("after a new leader: %+v, %v", got, s2.perCluster(j))
	}
	got, err = Do(ctx, s2.e, AbortMigration{ID: m.ID})
	if err != nil || got.State != model.MigrationAborted {
		t.Fatalf("abort: %+v %v", got, err)
	}
	if _, err := Do(ctx, s2.e, PauseMigration{ID: m.ID}); !errors.Is(err, core.ErrMigrationEnded) {
		t.Fatalf("pause of an aborted migration: %v", err)
	}
	job, _ := s2.e.Reads().GetJob(j)
	if p := job.Spec.Clusters; p == nil || len(p.Prefer) != 0 {
		t.Fatalf("policy after abort: %+v", p)
	}
	// The instance that could not move runs where its policy lets it.
	s2.until("six running on old", func() bool { return s2.perCluster(j)["old"] == 6 })
}

// A batch job's queued tasks go to the target; running ones finish where
// they run; none is lost or run twice.
func TestMigrationOfABatchPool(t *testing.T) {
	ctx := context.Background()
	s := newClusterShard(t, memstore.New(), clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 2)
	spec := oneCore(40)
	spec.Task.Env = map[string]string{sim.EnvDuration: "2s"}
	spec.Clusters = nil
	if err := s.e.clusters.setPoolPolicy(ctx, core.RootPool, &model.ClusterPolicy{Avoid: []string{"new"}}); err != nil {
		t.Fatal(err)
	}
	j := s.create(spec)
	s.until("16 running on old", func() bool { return s.perCluster(j)["old"] == 16 })
	m, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Pool: core.RootPool, To: "new"}})
	if err != nil {
		t.Fatal(err)
	}
	s.until("job succeeded", func() bool {
		job, _ := s.e.Reads().GetJob(j)
		return job.Status.State == model.JobSucceeded
	})
	s.until("migration succeeded", func() bool { return s.migration(m.ID).State == model.MigrationSucceeded })
	tasks := s.tasks(j)
	onNew := 0
	for _, tk := range tasks {
		if tk.Run != 1 {
			t.Errorf("task %s ran %d times", tk.ID, tk.Run)
		}
		if tk.Cluster == "new" {
			onNew++
		}
	}
	if len(tasks) != 40 || onNew != 24 {
		t.Fatalf("%d tasks, %d on new; want 40 and the 24 queued at the start", len(tasks), onNew)
	}
	if rec := s.migration(m.ID).Jobs[0]; len(rec.Moved) != 24 {
		t.Fatalf("report: %d moved, want 24", len(rec.Moved))
	}
}

// A migration is refused, naming the target cluster, when the target has
// no host up, no host that can hold one of the job's tasks, or, for a
// long-running job, less free than its instances still to move need; a
// refused migration is not stored.
func TestMigrationRefusedForLackOfRoom(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newClusterShard(t, memstore.New(), clk, 1) // new: one host of 4 cores

	// Ten instances of one core each need 10 cores; new has 4.
	many := s.service(model.JobSpec{Name: "many", Instances: 10, SLA: &model.SLA{MaxUnavailable: 1},
		Task:     model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 1000, MemMB: 10}},
		Clusters: &model.ClusterPolicy{Avoid: []string{"sim:new"}}})
	s.until("many runs on old", func() bool { return s.perCluster(many)["old"] == 10 })
	// A task of 4.5 cores fits no host of new (nor of old: it waits).
	wide := s.service(model.JobSpec{Name: "wide", Instances: 1,
		Task: model.TaskSpec{Command: "sim", Resources: model.Resources{MilliCPU: 4500, MemMB: 10}}})

	refused := func(j model.JobID, text string) {
		t.Helper()
		_, err := Do(ctx, s.e, StartMigration{MigrationRequest: core.MigrationRequest{Job: j, To: "new"}})
		if !errors.Is(err, core.ErrNoCapacity) || !strings.Contains(err.Error(), "to_cluster") || !strings.Contains(err.Error(), text) {
			t.Fatalf("migration of %s: %v, want no capacity naming to_cluster and %q", j, err, text)
		}
	}
	refused(many, "needs cpu=10")
	refused(wide, "can hold a task")
	if _, err := Do(ctx, s.e, MarkHostDown{Host: "new/h0", Force: true}); err != nil {
		t.Fatal(err)
	}
	s.until("new's host down", func() bool {
		v, ok := s.e.Hosts().View("new/h0")
		return ok && v.State != model.HostUp
	})
	refused(many, "has no host up")
	if ms, _ := s.e.Reads().ListMigrations(ctx); len(ms) != 0 {
		t.Fatalf("refused migrations were stored: %d", len(ms))
	}
}
