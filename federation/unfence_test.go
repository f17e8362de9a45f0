package federation

import (
	"context"
	"slices"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// wasStopped says whether the region's shard was asked to stop job.
func (s *relocShard) wasStopped(job string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.stopped, job)
}

// addJob puts a new job in the region's shard.
func (s *relocShard) addJob(job string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs[job] = 0
}

// setCHealth sets how a and b see c.
func (f *relocFed) setCHealth(h string) {
	f.dirs["a"].SetHealth("c", h)
	f.dirs["b"].SetHealth("c", h)
}

// cutOffC has c see neither a nor b, and checks that it fences itself.
func (f *relocFed) cutOffC(t *testing.T, ctx context.Context) {
	t.Helper()
	f.dirs["c"].SetHealth("a", "failed")
	f.dirs["c"].SetHealth("b", "failed")
	f.shells["c"].Tick(ctx)
	if !f.shells["c"].fenced {
		t.Fatal("c not fenced while it sees no region alive")
	}
}

// c is cut off from a and b, not from its hosts: it fences itself, and a
// relocates its job. The cut heals: c sees a and b alive at once, but
// they hold it failed until it has been reachable for recoverAfter. c
// stops its original of the relocated job and stays fenced meanwhile (a
// job created in it then is relocated too, and stopped in it before it
// ever launched); it unfences once a and b hold it alive, so no job runs
// in two regions.
func TestUnfenceWaitsUntilTheOthersHoldTheRegionAlive(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 0})
	c := f.shells["c"]
	c.syncProgress(ctx) // j1's replica to a
	c.Tick(ctx)
	if c.fenced {
		t.Fatal("c fenced with every region alive")
	}

	f.cutOffC(t, ctx)
	f.cFailed()
	f.shells["a"].Tick(ctx)
	f.wantCopies(t, "a relocates c's job", "a:j1@c")

	f.dirs["c"].SetHealth("a", "alive")
	f.dirs["c"].SetHealth("b", "alive")
	c.Tick(ctx)
	if !f.shards["c"].wasStopped("j1") {
		t.Fatal("c did not stop its original of j1, relocated by a")
	}
	if !c.fenced {
		t.Fatal("c unfenced while a and b still hold it failed")
	}
	f.shards["c"].addJob("j2")
	c.progress.lost()
	c.syncProgress(ctx)
	f.shells["a"].Tick(ctx)
	f.wantCopies(t, "a relocates the job created in c while a holds it failed", "a:j1@c", "a:j2@c")
	for range recheckEvery {
		c.Tick(ctx)
		if !c.fenced {
			t.Fatal("c unfenced while a and b still hold it failed")
		}
	}
	if !f.shards["c"].wasStopped("j2") {
		t.Fatal("c did not stop j2, relocated by a while c was fenced")
	}

	f.setCHealth("alive")
	c.Tick(ctx)
	if c.fenced {
		t.Fatal("c still fenced with a and b holding it alive")
	}
	f.shells["a"].Tick(ctx)
	f.wantCopies(t, "nothing relocated once c is alive", "a:j1@c", "a:j2@c")
}

// The views of a cut differ: c may see a and b alive throughout while
// they hold it failed, and a relocates its job. c checks with them every
// recheckEvery ticks even when it sees everyone alive: it stops its
// original and fences itself until they hold it alive again.
func TestRegionThatMissedTheCutFencesOnceHeldFailed(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 0})
	c := f.shells["c"]
	c.syncProgress(ctx)
	c.Tick(ctx)
	if c.fenced {
		t.Fatal("c fenced with every region alive")
	}
	f.cFailed()
	f.shells["a"].Tick(ctx)
	f.wantCopies(t, "a relocates c's job", "a:j1@c")
	for range recheckEvery {
		c.Tick(ctx)
	}
	if !f.shards["c"].wasStopped("j1") {
		t.Fatalf("c did not stop its original of j1 within %d ticks", recheckEvery)
	}
	if !c.fenced {
		t.Fatal("c not fenced though a and b hold it failed")
	}
	f.setCHealth("suspect")
	c.Tick(ctx)
	if !c.fenced {
		t.Fatal("c unfenced while a and b hold it suspect")
	}
	f.setCHealth("alive")
	c.Tick(ctx)
	if c.fenced {
		t.Fatal("c still fenced with a and b holding it alive")
	}
}

// A relocation pass can still run when its region sees the failed one
// alive again: the owner's check in the middle of it is told so, and the
// owner stays fenced until the pass ended and it stopped what moved.
func TestUnfenceWaitsForARelocationPassInFlight(t *testing.T) {
	ctx := context.Background()
	f := startRelocFed(t, map[string]uint32{"j1": 0})
	c := f.shells["c"]
	c.syncProgress(ctx)
	f.cutOffC(t, ctx)

	f.cFailed()
	entered, release := make(chan struct{}), make(chan struct{})
	f.shards["a"].beforeCreate = func() {
		close(entered)
		<-release
	}
	passDone := make(chan struct{})
	go func() {
		defer close(passDone)
		f.shells["a"].relocate(ctx, "c")
	}()
	<-entered // a's pass creates j1's copy
	f.setCHealth("alive")
	f.dirs["c"].SetHealth("a", "alive")
	f.dirs["c"].SetHealth("b", "alive")
	resp, err := f.routers["a"].ListReplicas(ctx, &pb.ListReplicasRequest{OwnerRegion: "c", RelocatedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetRelocating() || resp.GetOwnerHealth() != "alive" || len(resp.GetReplicas()) != 0 {
		t.Fatalf("a's answer in the middle of its pass: relocating %v, health %q, %d relocated; want relocating, alive, none recorded yet",
			resp.GetRelocating(), resp.GetOwnerHealth(), len(resp.GetReplicas()))
	}
	c.Tick(ctx)
	if !c.fenced {
		t.Fatal("c unfenced in the middle of a's relocation pass")
	}
	close(release)
	<-passDone
	f.wantCopies(t, "a's pass ends", "a:j1@c")
	c.Tick(ctx)
	if !f.shards["c"].wasStopped("j1") || c.fenced {
		t.Fatalf("after a's pass: c stopped j1 %v, fenced %v; want stopped and unfenced", f.shards["c"].wasStopped("j1"), c.fenced)
	}
	f.shells["a"].relocate(ctx, "c")
	f.wantCopies(t, "a relocates nothing once it holds c alive", "a:j1@c")
}
