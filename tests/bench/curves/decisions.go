package main

import (
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/placement/placebench"
)

// cacheWhy explains a scan whose time per host visited grows with the
// hosts.
const cacheWhy = "the work per host visited is constant, its time is not (full_scan_cpu_ns_per_host in the CSV): the hosts' records " +
	"and label maps, a few hundred bytes per host, outgrow the CPU caches, so more visits miss them"

// decisionsCurve measures placement decisions per second as the cluster
// grows, for the core on two workloads and for the two baselines, each in
// the same run at each size:
//
//   - core, batch: placebench.EquivalenceBatch, jobs of 1,000 identical
//     tasks, 20 tasks per host (one Place pass);
//   - core, distinct: placebench.DistinctTasks, every task its own
//     resources and one of 13 constraint sets, 10 tasks per host;
//   - full scan and sampled: NaivePlace and SampledPlace on the first
//     baseline tasks of the distinct workload, same snapshot.
func decisionsCurve(hostSizes []int, baseline, rounds int, log func(string, ...any)) (*Curve, error) {
	c := &Curve{
		Name:   "decisions-vs-hosts",
		Title:  "Placement decisions per second against cluster size",
		XLabel: "hosts", YLabel: "decisions per CPU second (one goroutine)", XName: "hosts",
		What: fmt.Sprintf("placement core (placement.Place, one pass, one goroutine) on batch jobs of identical tasks (20 per host) and on "+
			"all-distinct tasks (10 per host), and the two baselines on the first %d distinct tasks: the full scan of every host "+
			"(NaivePlace) and kube-scheduler's sampled scan (SampledPlace, max(5%%, 50%% - hosts/125) of the hosts, at least 100). "+
			"Decisions per second of the process's CPU time inside the call (wall-clock rates are in the CSV too: on this shared "+
			"machine a long call is also descheduled).", baseline),
		Columns: []string{"hosts", "core_batch_dec_per_cpu_s", "core_distinct_dec_per_cpu_s", "full_scan_dec_per_cpu_s", "sampled_dec_per_cpu_s",
			"core_batch_dec_per_s", "core_distinct_dec_per_s", "full_scan_dec_per_s", "sampled_dec_per_s",
			"sampled_hosts_scored", "sampled_quality", "full_scan_cpu_ns_per_host", "core_batch_tasks", "core_distinct_tasks",
			"index_build_ms", "index_bytes_per_host"},
		Plots: []Plot{
			{Column: "core_batch_dec_per_cpu_s", Label: "core, batch (equivalence classes)", Growth: RatePerUnit},
			{Column: "core_distinct_dec_per_cpu_s", Label: "core, distinct tasks", Growth: RatePerUnit},
			{Column: "full_scan_dec_per_cpu_s", Label: "full scan (every host)", Growth: RatePerUnit, WhyNotLinear: cacheWhy},
			{Column: "sampled_dec_per_cpu_s", Label: "sampled (kube-scheduler's default sample)", Growth: RatePerUnit, WhyNotLinear: cacheWhy},
		},
	}
	rows, err := interleaved(hostSizes, rounds, func(n int) ([]float64, error) { return decisionsPoint(n, baseline, log) })
	if err != nil {
		return nil, err
	}
	// Rates: the fastest run; time and cost per host: the least; the rest
	// does not vary between runs (index bytes: the median).
	better := []int{0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -1, 0, 0, -1, 0}
	for _, runs := range rows {
		c.Rows = append(c.Rows, bestRow(runs, better))
	}
	c.Notes = []string{
		slopeNote(c, "Wall-clock time per decision (the columns without _cpu), which other work on the machine lengthens: ",
			RatePerUnit, [][2]string{{"core, batch", "core_batch_dec_per_s"}, {"core, distinct", "core_distinct_dec_per_s"},
				{"full scan", "full_scan_dec_per_s"}, {"sampled", "sampled_dec_per_s"}}),
		fmt.Sprintf("Each figure is the best of %d runs (highest rate, least time), the runs of all sizes interleaved so that "+
			"a burst of other work on the machine does not land on one end of the curve: these are pure functions on one "+
			"goroutine, and the best run is the one least disturbed.", rounds),
		"The core answers a task from a segment tree over its feasibility group's hosts: a descent costs O(log hosts), " +
			"and a batch job's identical tasks share one descent per host they fill. Building a group for a new constraint " +
			"set scans the hosts once per pass, which the distinct workload's 13 sets pay at every size.",
		"The full scan looks at every host for every task: its work per decision grows linearly with the hosts, its time " +
			"a little faster (see above).",
		"The sampled scan stops after a bounded number of feasible hosts: 100 at 100 hosts, falling from 420 at 1,000 " +
			"hosts to 300 at 6,000 (the adaptive percentage drops faster than the hosts grow), then 5% of the hosts, so " +
			"linear again beyond that. Its quality is in the CSV (sampled_quality, as in make bench).",
	}
	return c, nil
}

// decisionsPoint measures one cluster size once: a row of the curve.
func decisionsPoint(n, baseline int, log func(string, ...any)) ([]float64, error) {
	batch := placebench.EquivalenceBatch(n, max(n/50, 1), 1000, 1)
	batch.NaiveTasks = 1 // the baselines run on the distinct workload
	fb := placebench.RunScenario(batch)
	distinct := placebench.DistinctTasks(n, 10*n, 1)
	distinct.NaiveTasks = baseline
	fd := placebench.RunScenario(distinct)
	for _, f := range []placebench.Figures{fb, fd} {
		if f.Err != "" {
			return nil, fmt.Errorf("%s: %s", f.Name, f.Err)
		}
		if f.Unplaced > 0 {
			return nil, fmt.Errorf("%s: %d tasks unplaced; the workload must fit", f.Name, f.Unplaced)
		}
	}
	log("decisions: %d hosts: core batch %.0f/s, distinct %.0f/s, full scan %.0f/s, sampled %.0f/s (quality %.2f)",
		n, fb.DecisionsPerSec, fd.DecisionsPerSec, fd.NaiveDecisionsPerSec, fd.SampledDecisionsPerSec, fd.SampledQuality.Fraction)
	perCPU := func(tasks int, seconds float64) float64 { return float64(tasks) / max(seconds, 1e-9) }
	fullCPU := perCPU(fd.NaiveTasks, fd.NaiveCPUSeconds)
	return []float64{float64(n), perCPU(fb.Tasks, fb.PlaceCPUSeconds), perCPU(fd.Tasks, fd.PlaceCPUSeconds), fullCPU,
		perCPU(fd.NaiveTasks, fd.SampledCPUSeconds),
		fb.DecisionsPerSec, fd.DecisionsPerSec, fd.NaiveDecisionsPerSec,
		fd.SampledDecisionsPerSec, float64(placement.SampleSize(n)), fd.SampledQuality.Fraction,
		1e9 / fullCPU / float64(n), float64(fb.Tasks),
		float64(fd.Tasks), fd.BuildSeconds * 1000, float64(fd.IndexBytes.Used) / float64(n)}, nil
}

// interleaved measures every size rounds times, one round over all sizes
// after the other, so that a burst of other work on the machine spreads
// over the curve instead of bending one end of it. It returns the runs of
// each size, in the order of sizes.
func interleaved(sizes []int, rounds int, measure func(n int) ([]float64, error)) ([][][]float64, error) {
	runs := make([][][]float64, len(sizes))
	for range rounds {
		for i, n := range sizes {
			row, err := measure(n)
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], row)
		}
	}
	return runs, nil
}

// bestRow takes, per column, the highest figure (better 1), the lowest
// (-1) or the median (0) of rows measured alike.
func bestRow(rows [][]float64, better []int) []float64 {
	out := medianRow(rows)
	for j := range out {
		for _, r := range rows {
			switch {
			case better[j] > 0:
				out[j] = max(out[j], r[j])
			case better[j] < 0:
				out[j] = min(out[j], r[j])
			}
		}
	}
	return out
}

// medianRow is the median of each column over rows measured alike.
func medianRow(rows [][]float64) []float64 {
	out := make([]float64, len(rows[0]))
	col := make([]float64, len(rows))
	for j := range out {
		for i, r := range rows {
			col[i] = r[j]
		}
		slices.Sort(col)
		out[j] = col[len(col)/2]
	}
	return out
}
