package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/peloton-federated/peloton/tests/bench/harness"
)

// clientsCurve measures end-to-end placements per second as the number of
// clients submitting at once grows: distinct-10k's single-task jobs, jobs
// of them, submitted as fast as each client can through jobmgr.CreateJob commands
// to an in-process shard (boltstore, sim host manager with hosts hosts),
// timed from the first submission to the last placement persisted
// (harness.RunEndToEnd, as make bench's e2e part).
func clientsCurve(ctx context.Context, scenarios string, clients []int, hosts, jobs, runs int, budget time.Duration, log func(string, ...any)) (*Curve, error) {
	s, err := loadScenario(scenarios, "distinct-10k")
	if err != nil {
		return nil, err
	}
	c := &Curve{
		Name:   "placed-vs-clients",
		Title:  "End-to-end placements per second against clients (in-process shard, boltstore)",
		XLabel: "clients submitting at once", YLabel: "tasks placed and persisted per second", XName: "clients",
		What: fmt.Sprintf("in-process shard (jobmgr.Engine on boltstore, sim host manager, %d hosts), not through the HTTP/gRPC API: "+
			"%d single-task jobs (distinct-10k's) created by N clients at once with jobmgr.CreateJob commands; from the first submission "+
			"to the last placement persisted (make bench's e2e measure).", hosts, jobs),
		Columns: []string{"clients", "placed_per_s", "p50_ms", "p99_ms", "seconds"},
		Plots:   []Plot{{Column: "placed_per_s", Label: "single-task jobs placed and persisted per second", Growth: Scaling}},
	}
	rows, err := interleaved(clients, runs, func(n int) ([]float64, error) { return clientsPoint(ctx, s, n, hosts, jobs, budget, log) })
	if err != nil {
		return nil, err
	}
	for _, runs := range rows {
		c.Rows = append(c.Rows, medianRow(runs))
	}
	c.Notes = []string{
		fmt.Sprintf("Each figure is the median of %d runs, the runs of all client counts interleaved.", runs),
		"A job is acknowledged once it is on disk. boltstore has one writer: concurrent creates wait for it, and those " +
			"that arrive together share one commit (group commit), so more clients mean fewer fsyncs per job and the rate " +
			"grows with the clients, but slower than linearly: the commit itself, the job manager's pass and the two shared " +
			"CPUs are still paid per job, and every job waits for the batch it joins (p50 and p99 in the CSV grow with " +
			"the clients). The HTTP and gRPC layers are not in this curve: make bench-overload drives a dev cluster's API.",
	}
	return c, nil
}

// clientsPoint runs the jobs once with n clients: a row of the curve.
func clientsPoint(ctx context.Context, s *harness.Scenario, n, hosts, jobs int, budget time.Duration, log func(string, ...any)) ([]float64, error) {
	// The store ceiling is not plotted: write one record, not thousands of
	// job creates.
	s.Sizes["curve"] = harness.Size{Hosts: hosts, Jobs: jobs, EndToEndBudget: harness.Duration(budget), StoreCeilingTasks: 1}
	w, err := s.Build("curve")
	if err != nil {
		return nil, err
	}
	w.Submitters = n
	dir, err := os.MkdirTemp("", "peloton-curves-clients-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	f := harness.RunEndToEnd(ctx, w, dir)
	if f.Err != "" || f.TimedOut || f.Placed != w.Tasks || f.Overcommitted != 0 {
		return nil, fmt.Errorf("%d clients: %s", n, f.Note())
	}
	log("clients: %d: %.0f placed/s, p50 %.1fms, p99 %.1fms", n, f.PlacementsPerSec, f.P50Ms, f.P99Ms)
	return []float64{float64(n), f.PlacementsPerSec, f.P50Ms, f.P99Ms, f.Seconds}, nil
}
