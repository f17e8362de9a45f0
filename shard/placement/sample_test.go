package placement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// kube-scheduler's adaptive default, point by point.
func TestSampleSize(t *testing.T) {
	for _, c := range []struct{ hosts, want int }{
		{-1, 0}, {0, 0}, {1, 1}, {99, 99},
		{100, 100},     // 50% of 100 = 50, raised to the minimum of 100
		{250, 120},     // 48%
		{1000, 420},    // 42%
		{5000, 500},    // 10%
		{5500, 330},    // 6%
		{6000, 300},    // 2%, raised to 5%
		{10000, 500},   // 5%
		{50000, 2500},  // 5%
		{100000, 5000}, // 5%
	} {
		if got := SampleSize(c.hosts); got != c.want {
			t.Errorf("SampleSize(%d) = %d, want %d", c.hosts, got, c.want)
		}
	}
}

// The sampled baseline keeps every rule, places a task alone exactly when
// the full scan finds a host, is reproducible for a seed, and with a sample
// as large as the cluster chooses as well as the full scan.
func TestSampledPlaceAgainstNaive(t *testing.T) {
	for iter := range 200 {
		r := rand.New(rand.NewPCG(uint64(iter), 7))
		hosts := randomHosts(r, 1+r.IntN(40))
		tasks := randomTasks(r, r.IntN(60))
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			opts := SampleOptions{Seed: uint64(iter), Size: 1 + r.IntN(5)}
			res := SampledPlace(hosts, tasks, opts)
			checkResult(t, hosts, tasks, res)
			if again := SampledPlace(hosts, tasks, opts); !reflect.DeepEqual(res, again) {
				t.Fatal("same hosts, tasks and seed gave different results")
			}
			audited, q := SampledQuality(hosts, tasks, opts)
			if !reflect.DeepEqual(res, audited) {
				t.Fatal("SampledQuality placed differently from SampledPlace")
			}
			if q.SampledPlaced != len(res.Assignments) || q.FullScanPlaced != len(NaivePlace(hosts, tasks).Assignments) ||
				(q.SampledPlaced > 0 && (q.SampledFit <= 0 || q.SampledFit > 1)) ||
				(q.FullScanPlaced > 0 && (q.FullScanFit <= 0 || q.FullScanFit > 1 || q.Fraction <= 0)) {
				t.Fatalf("quality %+v for %d assignments", q, len(res.Assignments))
			}

			// A sample as large as the cluster chooses, at every step, a
			// host as good as the full scan would on the same free amounts.
			s := newSampler(hosts, SampleOptions{Seed: uint64(iter), Size: len(hosts)})
			s.n.placeEach(tasks, func(tk *Task) int {
				h, best := s.pick(tk), s.n.best(tk)
				if (h < 0) != (best < 0) || h >= 0 && s.n.leftover(h, tk) != s.n.leftover(best, tk) {
					t.Fatalf("task %+v: full sample chose %d, the full scan %d", *tk, h, best)
				}
				return h
			})

			for _, tk := range tasks {
				tk.Gang = 0
				alone := []Task{tk}
				naive := NaivePlace(hosts, alone)
				sampled := SampledPlace(hosts, alone, opts)
				if len(naive.Assignments) != len(sampled.Assignments) {
					t.Fatalf("task %+v: full scan placed %d, sampled %d", tk, len(naive.Assignments), len(sampled.Assignments))
				}
			}
		})
	}
}

// With a sample of one host, the baseline takes whichever feasible host its
// walk reaches first; the full scan packs the tightest. The quality figure
// must see the difference.
func TestSampledQualitySeesWorseChoices(t *testing.T) {
	hosts := make([]Host, 20)
	for i := range hosts {
		hosts[i] = Host{ID: model.HostID("h" + strconv.Itoa(i)), Schedulable: true,
			Free: model.Resources{MilliCPU: 16000, MemMB: 65536}}
	}
	tasks := make([]Task, 40)
	for i := range tasks {
		tasks[i] = Task{Ref: i, Job: "j", Resources: model.Resources{MilliCPU: 1000, MemMB: 4096}}
	}
	res, q := SampledQuality(hosts, tasks, SampleOptions{Seed: 3, Size: 1})
	if len(res.Assignments) != len(tasks) || q.SampledPlaced != len(tasks) || q.FullScanPlaced != len(tasks) {
		t.Fatalf("placed %d: %+v", len(res.Assignments), q)
	}
	// The full scan fills one host after another (each task takes more of
	// what is left); the one-host walk lands on a fresh host most times.
	if q.Fraction >= 0.5 || q.Fraction <= 0 || q.SampledFit >= q.FullScanFit {
		t.Fatalf("one-host sample on a packing workload: %+v", q)
	}
	_, all := SampledQuality(hosts, tasks, SampleOptions{Seed: 3, Size: len(hosts)})
	if all.Fraction != 1 {
		t.Fatalf("full sample on identical hosts: %+v", all)
	}
}
