package resmgr

import (
	"fmt"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// benchTree is a two-level tree: groups of leaves under the root, each
// leaf with a reservation of 10 cpu.
func benchTree(b *testing.B, leaves, perGroup int) *entitlement.Tree {
	b.Helper()
	groups := (leaves + perGroup - 1) / perGroup
	pool := func(path string, res int64) entitlement.PoolSpec {
		return entitlement.PoolSpec{Path: path,
			Reservation: model.Resources{MilliCPU: res},
			Limit:       model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited},
			Share:       model.EqualShares(1)}
	}
	specs := []entitlement.PoolSpec{pool("/", int64(10_000*leaves))}
	for g := range groups {
		n := min(perGroup, leaves-g*perGroup)
		specs = append(specs, pool(fmt.Sprintf("/g%d", g), int64(10_000*n)))
		for l := range n {
			specs = append(specs, pool(fmt.Sprintf("/g%d/l%d", g, l), 10))
		}
	}
	tree, err := entitlement.NewTree(specs)
	if err != nil {
		b.Fatal(err)
	}
	return tree
}

// benchGangs spreads gangs evenly over the leaves: four priorities, one in
// eight non-preemptible, one cpu per task.
func benchGangs(tree *entitlement.Tree, count, members int) []Gang {
	var leaves []string
	for i := range tree.Len() {
		if tree.IsLeaf(i) {
			leaves = append(leaves, tree.Path(i))
		}
	}
	gangs := make([]Gang, count)
	for i := range gangs {
		id := GangID{Job: model.JobID(fmt.Sprintf("job%d", i/100)), Gang: uint32(i % 100)}
		g := Gang{ID: id, Pool: leaves[i%len(leaves)], Priority: int32(i % 4), Preemptible: i%8 != 0,
			PerTask: model.Resources{MilliCPU: 1000, MemMB: 64}}
		for m := range members {
			g.Members = append(g.Members, Member{Task: model.TaskID{Job: id.Job, Instance: id.Gang*uint32(members) + uint32(m)}})
		}
		gangs[i] = g
	}
	return gangs
}

// admissionRun measures one admission pass over freshly queued gangs and
// returns the time the pass took and how many gangs it admitted.
type admissionRun func(gangs []Gang, in PassInput) (time.Duration, int)

func schedulerAdmission(tree *entitlement.Tree) admissionRun {
	return func(gangs []Gang, in PassInput) (time.Duration, int) {
		s := New(tree, Config{PreemptAfterPasses: 3})
		for _, g := range gangs {
			_ = s.Enqueue(g)
		}
		start := time.Now()
		d := s.Pass(in)
		return time.Since(start), len(d.Admit)
	}
}

// referenceAdmission is the naive baseline: the same rules, every next gang
// and every sum found by scanning the pool.
func referenceAdmission(tree *entitlement.Tree) admissionRun {
	return func(gangs []Gang, in PassInput) (time.Duration, int) {
		r := newRef(tree, Config{PreemptAfterPasses: 3})
		for _, g := range gangs { // no duplicate check: the IDs are distinct
			x := &refGang{g: g, kind: KindOf(&g), live: len(g.Members), seq: r.next()}
			r.gangs = append(r.gangs, x)
		}
		start := time.Now()
		d := r.Pass(in)
		return time.Since(start), len(d.Admit)
	}
}

// BenchmarkAdmission: 1,000 leaf pools, 100,000 queued gangs of 1 and of 8
// tasks, capacity for three quarters of them. It reports admitted gangs
// per second for the scheduler and for the naive reference, measured in
// the same run, and their ratio.
func BenchmarkAdmission(b *testing.B) {
	tree := benchTree(b, 1000, 50)
	for _, members := range []int{1, 8} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			gangs := benchGangs(tree, 100_000, members)
			in := PassInput{Capacity: model.Resources{MilliCPU: int64(750 * len(gangs) * members), MemMB: model.Unlimited}}
			var fast, naive time.Duration
			var admitted int
			for b.Loop() {
				d, n := schedulerAdmission(tree)(gangs, in)
				fast += d
				admitted = n
			}
			// The baseline is slow: a few runs are enough for its figure.
			runs := 0
			for range max(1, min(b.N, 3)) {
				d, n := referenceAdmission(tree)(gangs, in)
				if n != admitted {
					b.Fatalf("reference admitted %d, scheduler %d", n, admitted)
				}
				naive += d
				runs++
			}
			fastRate := float64(admitted) * float64(b.N) / fast.Seconds()
			naiveRate := float64(admitted) * float64(runs) / naive.Seconds()
			b.ReportMetric(fastRate, "gangs/s")
			b.ReportMetric(naiveRate, "naive-gangs/s")
			b.ReportMetric(fastRate/naiveRate, "x-naive")
			b.ReportMetric(float64(admitted), "admitted/pass")
		})
	}
}

// BenchmarkPass: the steady-state pass (nothing changes) with 10,000 leaf
// pools and 100,000 gangs, half of them admitted, against the same pass
// started from scratch (every leaf looked at, as every pass did before
// passes followed what changed) and the naive reference's pass on the
// same state, each measured in the same run.
func BenchmarkPass(b *testing.B) {
	tree := benchTree(b, 10_000, 100)
	gangs := benchGangs(tree, 100_000, 1)
	in := PassInput{Capacity: model.Resources{MilliCPU: 50_000_000, MemMB: model.Unlimited}, Slack: model.Resources{MilliCPU: 100_000}}
	s := New(tree, Config{PreemptAfterPasses: 3})
	r := newRef(tree, Config{PreemptAfterPasses: 3})
	for _, g := range gangs {
		_ = s.Enqueue(g)
		r.gangs = append(r.gangs, &refGang{g: g, kind: KindOf(&g), live: len(g.Members), seq: r.next()})
	}
	s.Pass(in)
	r.Pass(in)
	var fast time.Duration
	for b.Loop() {
		start := time.Now()
		s.Pass(in)
		fast += time.Since(start)
	}
	runs := max(1, min(b.N, 3))
	start := time.Now()
	for range runs {
		s.passFromScratch(in)
	}
	scratch := time.Since(start)
	start = time.Now()
	for range runs {
		r.Pass(in)
	}
	naive := time.Since(start)
	perPass := fast.Seconds() / float64(b.N)
	scratchPerPass := scratch.Seconds() / float64(runs)
	naivePerPass := naive.Seconds() / float64(runs)
	b.ReportMetric(perPass*1e3, "ms/pass")
	b.ReportMetric(scratchPerPass*1e3, "scratch-ms/pass")
	b.ReportMetric(scratchPerPass/perPass, "x-scratch")
	b.ReportMetric(naivePerPass*1e3, "naive-ms/pass")
	b.ReportMetric(naivePerPass/perPass, "x-naive")
}

// BenchmarkPassRouting: the pass a job manager runs under a stream of
// small jobs, one new single-task gang in one leaf pool among 10,000 (the
// federation's routing case), with 100,000 gangs already there. full: the
// cluster is full, so the new gang queues and moves its pool's demand and
// its siblings' entitlements; room: the new gang is admitted, and one
// admitted earlier ends, so that the state stays the same size. It
// reports ms/pass against the same passes started from scratch, measured
// in the same run on a scheduler given the same changes.
func BenchmarkPassRouting(b *testing.B) {
	tree := benchTree(b, 10_000, 100)
	var leaves []string
	for i := range tree.Len() {
		if tree.IsLeaf(i) {
			leaves = append(leaves, tree.Path(i))
		}
	}
	for _, tc := range []struct {
		name     string
		capacity int64
	}{{"full", 50_000_000}, {"room", 200_000_000}} {
		b.Run(tc.name, func(b *testing.B) {
			in := PassInput{Capacity: model.Resources{MilliCPU: tc.capacity, MemMB: model.Unlimited}}
			gangs := benchGangs(tree, 100_000, 1)
			fresh := func() *Scheduler {
				s := New(tree, Config{PreemptAfterPasses: 3})
				for _, g := range gangs {
					_ = s.Enqueue(g)
				}
				s.Pass(in)
				return s
			}
			n := 0
			// step queues the n-th routed gang, ends the one routed a
			// thousand gangs before if it was admitted, and runs a pass.
			step := func(s *Scheduler, pass func(PassInput) Decision) time.Duration {
				id := GangID{Job: "routed", Gang: uint32(n)}
				g := Gang{ID: id, Pool: leaves[(n*7919)%len(leaves)], Preemptible: true,
					PerTask: model.Resources{MilliCPU: 1000, MemMB: 64}, Members: []Member{{Task: model.TaskID{Job: id.Job, Instance: id.Gang}}}}
				if err := s.Enqueue(g); err != nil {
					b.Fatal(err)
				}
				if old := (GangID{Job: "routed", Gang: uint32(n - 1000)}); n >= 1000 {
					if _, state, ok := s.Lookup(old); ok && state == Admitted {
						s.Remove(old)
					}
				}
				n++
				start := time.Now()
				pass(in)
				return time.Since(start)
			}
			s := fresh()
			var fast time.Duration
			for b.Loop() {
				fast += step(s, s.Pass)
			}
			base := fresh()
			runs := max(1, min(b.N, 10))
			var scratch time.Duration
			n = 0
			for range runs {
				scratch += step(base, base.passFromScratch)
			}
			perPass := fast.Seconds() / float64(b.N)
			scratchPerPass := scratch.Seconds() / float64(runs)
			b.ReportMetric(perPass*1e3, "ms/pass")
			b.ReportMetric(scratchPerPass*1e3, "scratch-ms/pass")
			b.ReportMetric(scratchPerPass/perPass, "x-scratch")
		})
	}
}
