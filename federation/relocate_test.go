package federation

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// relocShard is countingShard that also takes the jobs a relocation
// creates, and keeps them.
type relocShard struct {
	countingShard
	region  string
	created []*pb.JobSpec
	stopped []string
	// beforeCreate, when set, runs at the start of every CreateJob
	// (a test pauses a relocation pass there).
	beforeCreate func()
}

func newRelocShard(region string, jobs map[string]uint32) *relocShard {
	return &relocShard{region: region, countingShard: countingShard{jobs: jobs, reads: map[string]int{}, events: make(chan *pb.Event)}}
}

func (s *relocShard) CreateJob(_ context.Context, req *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	if s.beforeCreate != nil {
		s.beforeCreate()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created = append(s.created, req.GetSpec())
	id := fmt.Sprintf("copy-%s-%d", s.region, len(s.created))
	s.jobs[id] = 0
	return &pb.CreateJobResponse{Job: &pb.Job{Id: id, Spec: req.GetSpec()}}, nil
}

func (s *relocShard) StopJob(_ context.Context, req *pb.StopJobRequest) (*pb.StopJobResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = append(s.stopped, req.GetId())
	return &pb.StopJobResponse{}, nil
}

// copies lists the relocated copies the shard created, by the original's
// "<id>@<region>".
func (s *relocShard) copies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, spec := range s.created {
		out = append(out, spec.GetLabels()[LabelRelocatedFrom])
	}
	return out
}

// relocFed is regions a, b and c on loopback, each keeping replicas.
type relocFed struct {
	shards  map[string]*relocShard
	routers map[string]*Router
	dirs    map[string]*StaticDirectory
	shells  map[string]*Failover
}

func startRelocFed(t *testing.T, cJobs map[string]uint32) *relocFed {
	t.Helper()
	f := &relocFed{shards: map[string]*relocShard{
		"a": newRelocShard("a", map[string]uint32{}), "b": newRelocShard("b", map[string]uint32{}), "c": newRelocShard("c", cJobs),
	}, shells: map[string]*Failover{}}
	_, f.routers, f.dirs = serveRegions(t, namedShard{"a", f.shards["a"]}, namedShard{"b", f.shards["b"]}, namedShard{"c", f.shards["c"]})
	for _, n := range []string{"a", "b", "c"} {
		f.routers[n].SetReplicaStore(&memReplicas{reps: map[string][]*pb.Replica{}})
		f.shells[n] = NewFailover(f.routers[n], func(bool) {}, slog.New(slog.DiscardHandler), time.Hour)
	}
	return f
}

// holders lists the regions that hold a replica of owner's job.
func (f *relocFed) holders(t *testing.T, owner, job string) []string {
	t.Helper()
	var out []string
	for _, n := range []string{"a", "b", "c"} {
		resp, err := f.routers[n].ListReplicas(context.Background(), &pb.ListReplicasRequest{OwnerRegion: owner, JobId: job})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetReplicas()) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// wantCopies fails the test unless the relocated copies the regions
// created are want ("<region>:<job>@c"), in order.
func (f *relocFed) wantCopies(t *testing.T, why string, want ...string) {
	t.Helper()
	if got := f.relocated(); !slices.Equal(got, want) {
		t.Fatalf("%s: relocated copies %v, want %v", why, got, want)
	}
}

// pushToAThenB has c's progress sync put its replicas in a, then, with a
// failed in c's view (a flap of c's links), in b as well.
func (f *relocFed) pushToAThenB(ctx context.Context) {
	f.shells["c"].syncProgress(ctx)
	f.dirs["c"].SetHealth("a", "failed")
	f.shells["c"].syncProgress(ctx)
}

// cFailed has a and b hold c failed.
func (f *relocFed) cFailed() {
	f.dirs["a"].SetHealth("c", "failed")
	f.dirs["b"].SetHealth("c", "failed")
}

// relocatedTo is where region's copy of c's job records it was relocated
// to: "" when not, "none" when the region holds no copy.
func (f *relocFed) relocatedTo(t *testing.T, region, job string) string {
	t.Helper()
	resp, err := f.routers[region].ListReplicas(context.Background(), &pb.ListReplicasRequest{OwnerRegion: "c", JobId: job})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetReplicas()) != 1 {
		return "none"
	}
	return resp.GetReplicas()[0].GetRelocatedRegion()
}

// relocated lists every copy of a relocated job the regions created.
func (f *relocFed) relocated() []string {
	var out []string
	for _, n := range []string{"a", "b", "c"} {
		for _, from := range f.shards[n].copies() {
			out = append(out, n+":"+from)
		}
	}
	return out
}

// The owner's view of the others flaps, so its progress sync puts a
// job's replica first in a, then in b: both hold one when the owner is
// declared failed. The job is relocated once, by one region.
func TestReplicaMovedBetweenHoldersIsRelocatedOnce(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 2, "j2": 0})
	f.pushToAThenB(ctx)
	f.dirs["c"].SetHealth("a", "alive")
	f.shells["c"].syncProgress(ctx) // a is back: to a again
	for _, j := range []string{"j1", "j2"} {
		if h := f.holders(t, "c", j); len(h) == 0 {
			t.Fatalf("no replica of %s held", j)
		}
	}

	f.cFailed()
	for range 3 {
		f.shells["a"].Tick(ctx)
		f.shells["b"].Tick(ctx)
	}
	f.wantCopies(t, "each job once, by a, the relocator", "a:j1@c", "a:j2@c")
	// Both holders record the relocations: c, back, finds them whichever
	// it checks with first.
	for _, n := range []string{"a", "b"} {
		resp, _ := f.routers[n].ListReplicas(ctx, &pb.ListReplicasRequest{OwnerRegion: "c"})
		for _, rep := range resp.GetReplicas() {
			if rep.GetRelocatedRegion() == "" {
				t.Errorf("%s holds %s without its relocation", n, rep.GetJob().GetId())
			}
		}
	}
}

// The relocator is the first region by name among those not failed: it
// relocates from a replica another region holds, and records it; the
// holder does not relocate.
func TestRelocatorReadsTheReplicasOthersHold(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 3})
	f.dirs["c"].SetHealth("a", "failed")
	f.shells["c"].syncProgress(ctx) // to b only
	if h := f.holders(t, "c", "j1"); !slices.Equal(h, []string{"b"}) {
		t.Fatalf("replica of j1 held by %v, want b only", h)
	}
	f.cFailed()
	f.shells["b"].relocate(ctx, "c")
	f.wantCopies(t, "b is not the relocator")
	f.shells["a"].relocate(ctx, "c")
	f.wantCopies(t, "a relocates from b's replica", "a:j1@c")
	if spec := f.shards["a"].created[0]; spec.GetInstances() != 7 {
		t.Fatalf("relocated with %d instances, want the 7 not succeeded in b's replica", spec.GetInstances())
	}
	if to := f.relocatedTo(t, "a", "j1"); to != "a" {
		t.Fatalf("a records j1 relocated to %q, want a", to)
	}
	for range 3 {
		f.shells["a"].relocate(ctx, "c")
		f.shells["b"].relocate(ctx, "c")
	}
	f.wantCopies(t, "relocated once", "a:j1@c")
}

// A region that relocated while it saw the first region failed too (more
// than three regions) keeps the only record of it: the first region,
// once it relocates again, adopts it and does not relocate the job again.
func TestRelocationMadeElsewhereIsAdopted(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 0})
	f.pushToAThenB(ctx)
	f.dirs["b"].SetHealth("c", "failed")
	f.dirs["b"].SetHealth("a", "failed")
	f.shells["b"].relocate(ctx, "c") // b is the relocator in its view
	f.wantCopies(t, "b is the relocator in its view", "b:j1@c")
	f.dirs["b"].SetHealth("a", "alive")
	f.dirs["a"].SetHealth("c", "failed")
	for range 3 {
		f.shells["a"].relocate(ctx, "c")
		f.shells["b"].relocate(ctx, "c")
	}
	f.wantCopies(t, "a adopts b's relocation", "b:j1@c")
	if to := f.relocatedTo(t, "a", "j1"); to != "b" {
		t.Fatalf("a records j1 relocated to %q, want b's relocation", to)
	}
}

// A region that is not failed but does not answer may hold a relocation
// or a newer replica: the relocator waits for it.
func TestRelocatorWaitsForEveryRegionNotFailed(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 0})
	f.dirs["c"].SetHealth("a", "failed")
	f.shells["c"].syncProgress(ctx) // to b
	f.routers["b"].SetReplicaStore(brokenReplicas{})
	f.dirs["a"].SetHealth("c", "failed")
	f.shells["a"].relocate(ctx, "c")
	f.wantCopies(t, "b did not answer")
	f.dirs["a"].SetHealth("b", "failed") // no longer waited for
	f.shells["a"].relocate(ctx, "c")
	f.wantCopies(t, "no replica")
}

// Every holder of a copy records the relocation; an operator's failback
// moves the job home once, and each of them records that it did.
func TestFailBackMovesAJobRecordedTwiceOnce(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 4})
	f.pushToAThenB(ctx)
	f.cFailed()
	f.shells["a"].relocate(ctx, "c")
	f.dirs["a"].SetHealth("c", "alive")
	f.dirs["b"].SetHealth("c", "alive")
	resp, err := f.routers["a"].FailBack(ctx, &pb.FailBackRequest{Region: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetMoved()) != 1 || len(resp.GetNotMoved()) != 0 {
		t.Fatalf("failback moved %v, not %v; want j1 moved once", resp.GetMoved(), resp.GetNotMoved())
	}
	if n := len(f.shards["c"].created); n != 1 {
		t.Fatalf("c got %d jobs back, want 1", n)
	}
	if got := f.shards["a"].stopped; !slices.Equal(got, []string{"copy-a-1"}) {
		t.Fatalf("a stopped %v, want its copy copy-a-1", got)
	}
	for _, n := range []string{"a", "b"} {
		if to := f.relocatedTo(t, n, "j1"); to != "c" {
			t.Errorf("%s records j1 relocated to %q, want back in c", n, to)
		}
	}
}

// The owner's first check after a cut can run in the middle of a
// relocation pass: while a region is not alive in its view, it checks
// again, and stops its copies of what moved after its first check.
func TestOwnerChecksAgainWhileARegionIsNotAlive(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 0, "j2": 0})
	c := f.shells["c"]
	c.syncProgress(ctx) // to a
	f.dirs["c"].SetHealth("a", "failed")
	c.Tick(ctx)         // checked with b: nothing moved, c launches again
	c.syncProgress(ctx) // its replica region is b now
	if c.fenced || len(f.shards["c"].stopped) != 0 {
		t.Fatalf("after the first check: fenced %v, stopped %v", c.fenced, f.shards["c"].stopped)
	}
	f.cFailed()
	f.shells["a"].relocate(ctx, "c")
	for range recheckEvery {
		c.Tick(ctx)
	}
	if got := f.shards["c"].stopped; !slices.Equal(got, []string{"j1", "j2"}) {
		t.Fatalf("c stopped %v, want its originals of j1 and j2, relocated by a", got)
	}
}

// The relocator is the first region after the failed one by name,
// wrapping around, of those the deciding region does not hold failed.
func TestRelocatorOf(t *testing.T) {
	regions := func(health ...string) []Region {
		var out []Region
		for i, n := range []string{"a", "b", "c", "d"} {
			out = append(out, Region{Name: n, Addr: n + ":1", Health: health[i]})
		}
		return out
	}
	for _, tc := range []struct {
		failed, local string
		regions       []Region
		want          string
	}{
		{"c", "a", regions("alive", "alive", "failed", "alive"), "d"},
		{"c", "b", regions("alive", "alive", "failed", "failed"), "a"},
		{"d", "b", regions("alive", "alive", "alive", "failed"), "a"},
		{"d", "b", regions("failed", "alive", "alive", "failed"), "b"},
		{"a", "c", regions("failed", "suspect", "alive", "alive"), "b"}, // suspect counts: it may answer
		{"a", "c", regions("failed", "failed", "alive", "alive"), "c"},
		{"b", "a", []Region{{Name: "a"}, {Name: "b", Health: "failed"}, {Name: "c", Health: "alive"}}, "a"}, // c has no address
	} {
		if got := relocatorOf(tc.failed, tc.local, tc.regions); got != tc.want {
			t.Errorf("relocatorOf(%s) seen from %s in %v = %s, want %s", tc.failed, tc.local, tc.regions, got, tc.want)
		}
	}
}

// Of the copies of a job's replica, a recorded relocation wins, else the
// owner's latest progress, else this region's copy; a copy without the
// failover policy takes it from another.
func TestNewestReplicas(t *testing.T) {
	copyOf := func(holder string, config uint64, succeeded int, relocated string, pol *pb.FailoverPolicy) heldReplica {
		return heldReplica{holder: holder, rep: &pb.Replica{OwnerRegion: "c", RelocatedRegion: relocated,
			Succeeded: make([]uint32, succeeded), Job: &pb.Job{Id: "j", ConfigVersion: config, Spec: &pb.JobSpec{Failover: pol}}}}
	}
	none := &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_NONE}
	for _, tc := range []struct {
		name       string
		held       []heldReplica
		wantHolder string
	}{
		{"a relocation recorded", []heldReplica{copyOf("a", 3, 9, "", nil), copyOf("b", 1, 0, "d", nil)}, "b"},
		{"a newer config", []heldReplica{copyOf("a", 1, 9, "", nil), copyOf("b", 2, 0, "", nil)}, "b"},
		{"more succeeded", []heldReplica{copyOf("b", 2, 3, "", nil), copyOf("d", 2, 4, "", nil)}, "d"},
		{"the local copy on a tie", []heldReplica{copyOf("a", 2, 3, "", nil), copyOf("b", 2, 3, "", nil)}, "b"},
		{"the first by name on a tie", []heldReplica{copyOf("d", 2, 3, "", nil), copyOf("a", 2, 3, "", nil)}, "a"},
	} {
		got := newestReplicas("b", tc.held)
		if len(got) != 1 || got[0].holder != tc.wantHolder {
			t.Errorf("%s: got %v, want %s's copy", tc.name, got, tc.wantHolder)
		}
	}
	got := newestReplicas("b", []heldReplica{copyOf("a", 1, 0, "", none), copyOf("b", 2, 0, "", nil)})
	if got[0].holder != "b" || got[0].rep.GetJob().GetSpec().GetFailover().GetMode() != pb.FailoverPolicy_MODE_NONE {
		t.Errorf("newest copy %v: want b's with a's failover policy", got[0])
	}
}

// A job's relocation is recorded in every copy of its replica that lacks
// it: this region's, and other holders' without a relocation.
func TestLackingRelocation(t *testing.T) {
	held := func(holder, job, relocated string) heldReplica {
		return heldReplica{holder: holder, rep: &pb.Replica{RelocatedRegion: relocated, Job: &pb.Job{Id: job}}}
	}
	for _, tc := range []struct {
		name string
		held []heldReplica
		want map[string][]string
	}{
		{"this region's copy only", []heldReplica{held("b", "j", "")}, map[string][]string{"j": {"b"}}},
		{"every holder without it", []heldReplica{held("a", "j", ""), held("d", "j", "")}, map[string][]string{"j": {"b", "a", "d"}}},
		{"not the holders that have it", []heldReplica{held("a", "j", "d"), held("b", "j", "d"), held("c", "k", "")},
			map[string][]string{"j": {}, "k": {"b", "c"}}},
	} {
		got := lackingRelocation("b", tc.held)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for job, want := range tc.want {
			if !slices.Equal(got[job], want) {
				t.Errorf("%s: job %s lacks in %v, want %v", tc.name, job, got[job], want)
			}
		}
	}
}

// A relocated job runs its remaining instances in its target, labelled
// with where it came from; max_running and gangs fit the remaining count.
func TestRelocatedSpec(t *testing.T) {
	replica := func(spec *pb.JobSpec, succeeded ...uint32) *pb.Replica {
		return &pb.Replica{Job: &pb.Job{Id: "j1", Spec: spec}, Succeeded: succeeded}
	}
	for _, tc := range []struct {
		name                        string
		rep                         *pb.Replica
		remaining                   uint32
		instances, maxRunning, gang uint32
		overrides                   string // the first override's instances
	}{
		{"remaining instances", replica(&pb.JobSpec{Instances: 4, MaxRunning: 2}, 0), 3, 3, 2, 0, ""},
		{"max_running capped", replica(&pb.JobSpec{Instances: 4, MaxRunning: 4}, 0, 1), 2, 2, 2, 0, ""},
		{"whole gangs kept", replica(&pb.JobSpec{Instances: 4, GangSize: 2}, 0, 1), 2, 2, 0, 2, ""},
		{"a partial gang given up", replica(&pb.JobSpec{Instances: 4, GangSize: 2}, 0), 3, 3, 0, 0, ""},
		{"a daemon takes no count", replica(&pb.JobSpec{Type: pb.JobType_JOB_TYPE_DAEMON, MaxRunning: 1}), 1, 0, 0, 0, ""},
		{"overrides renumbered", replica(&pb.JobSpec{Instances: 3, Overrides: []*pb.InstanceOverride{{Instances: "1-2"}}}, 0), 2, 2, 0, 0, "0-1"},
	} {
		ns, err := relocatedSpec(tc.rep, "c", "d", "b", tc.remaining)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if ns.GetRegion() != "d" || ns.GetInstances() != tc.instances || ns.GetMaxRunning() != tc.maxRunning || ns.GetGangSize() != tc.gang {
			t.Errorf("%s: region %s instances %d max_running %d gang %d, want d %d %d %d", tc.name,
				ns.GetRegion(), ns.GetInstances(), ns.GetMaxRunning(), ns.GetGangSize(), tc.instances, tc.maxRunning, tc.gang)
		}
		if tc.overrides != "" && (len(ns.GetOverrides()) == 0 || ns.GetOverrides()[0].GetInstances() != tc.overrides) {
			t.Errorf("%s: overrides %v, want the first for %s", tc.name, ns.GetOverrides(), tc.overrides)
		}
		if ns.GetLabels()[LabelRelocatedFrom] != "j1@c" || ns.GetLabels()[LabelRelocatedBy] != "b" {
			t.Errorf("%s: labels %v", tc.name, ns.GetLabels())
		}
		if tc.rep.GetJob().GetSpec().GetRegion() != "" || tc.rep.GetJob().GetSpec().GetLabels() != nil {
			t.Errorf("%s: the replica's spec was changed", tc.name)
		}
	}
	bad := replica(&pb.JobSpec{Instances: 2, Overrides: []*pb.InstanceOverride{{Instances: "x"}}})
	if _, err := relocatedSpec(bad, "c", "d", "b", 2); err == nil {
		t.Error("a bad override range was carried over")
	}
}

func TestOthersByHealth(t *testing.T) {
	regions := []Region{{Name: "a", Health: "alive"}, {Name: "b", Health: "failed"}, {Name: "c", Health: "suspect"}, {Name: "d", Health: "alive"}, {Name: "e", Health: "failed"}}
	alive, failed := othersByHealth("a", regions)
	names := func(rs []Region) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	if !slices.Equal(names(alive), []string{"d"}) || !slices.Equal(names(failed), []string{"b", "e"}) {
		t.Errorf("alive %v failed %v, want [d] and [b e]", names(alive), names(failed))
	}
}
