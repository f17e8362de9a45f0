package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/tests/bench/harness"
	"github.com/peloton-federated/peloton/tests/testkit"
)

var benchSize = flag.String("bench.size", harness.SizeSmall, "scenario size the Go benchmarks run: small or full")

// binary is the peloton binary the API scenarios start, built once.
var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// Every scenario at its small size, through every part of the harness: the
// figures must be sane (everything placed, no host overcommitted, no rule
// broken, p50 <= p99, memory measured).
func TestSmallScenarios(t *testing.T) {
	all, err := loadScenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			r := harness.Run(context.Background(), s, harness.Options{Size: harness.SizeSmall, Binary: binary})
			if r.Err != "" {
				t.Fatal(r.Err)
			}
			if s.IsAPI() {
				checkAPI(t, s, &r)
				return
			}
			checkCore(t, &r)
			checkEndToEnd(t, &r)
			checkMemory(t, &r)
		})
	}
}

func checkCore(t *testing.T, r *harness.Result) {
	t.Helper()
	c := &r.Core
	switch {
	case c.Err != "":
		t.Fatalf("core: %s", c.Err)
	case c.Placed != r.Tasks || c.Unplaced != 0:
		t.Errorf("core placed %d of %d tasks (%d unplaced)", c.Placed, r.Tasks, c.Unplaced)
	case c.Overcommitted != 0 || c.RuleViolations != 0:
		t.Errorf("core: %d hosts overcommitted, %d rule violations", c.Overcommitted, c.RuleViolations)
	case c.Decisions < r.Tasks || c.DecisionsPerSec <= 0:
		t.Errorf("core: %d decisions at %.0f/s for %d tasks", c.Decisions, c.DecisionsPerSec, r.Tasks)
	case c.Placed > c.Decisions || c.PlacedPerSec <= 0 || c.PlacedPerSec > c.DecisionsPerSec:
		t.Errorf("core: %d placed of %d decisions, %.0f placed/s against %.0f decisions/s", c.Placed, c.Decisions, c.PlacedPerSec, c.DecisionsPerSec)
	case c.BaselineTasks <= 0 || c.FullScanDecisionsPerSec <= 0 || c.FullScanPlaced <= 0 || c.FullScanRatio <= 0:
		t.Errorf("core: full-scan baseline not measured: %+v", c)
	case c.SampledHosts <= 0 || c.SampledHosts > r.Hosts || c.SampledDecisionsPerSec <= 0 || c.SampledPlaced <= 0 || c.SampledRatio <= 0:
		t.Errorf("core: sampled baseline not measured: %+v", c)
	case c.SampledFit <= 0 || c.SampledFit > 1 || c.FullScanFit <= 0 || c.FullScanFit > 1 ||
		c.SampledQuality != c.SampledFit/c.FullScanFit:
		t.Errorf("core: sampled quality %v from fits %v (sampled) and %v (full scan)", c.SampledQuality, c.SampledFit, c.FullScanFit)
	case c.IndexBuildSeconds <= 0 || c.IndexBuiltBytes <= 0 || c.IndexBytes <= 0 ||
		c.IndexBytesPerHost != float64(c.IndexBytes)/float64(r.Hosts):
		t.Errorf("core: host index not measured: build %vs, %d bytes built, %d after, %.0f per host",
			c.IndexBuildSeconds, c.IndexBuiltBytes, c.IndexBytes, c.IndexBytesPerHost)
	}
}

func checkEndToEnd(t *testing.T, r *harness.Result) {
	t.Helper()
	e := r.EndToEnd
	if e == nil {
		t.Fatal("end to end not run at the small size")
	}
	switch {
	case e.Err != "":
		t.Fatalf("e2e: %s", e.Err)
	case e.TimedOut || e.Placed != r.Tasks || e.JobsSubmitted != r.Jobs:
		t.Errorf("e2e: placed %d of %d, submitted %d of %d jobs, timed out %v", e.Placed, r.Tasks, e.JobsSubmitted, r.Jobs, e.TimedOut)
	case e.Overcommitted != 0:
		t.Errorf("e2e: %d hosts overcommitted", e.Overcommitted)
	case e.P50Ms <= 0 || e.P50Ms > e.P99Ms:
		t.Errorf("e2e: p50 %.3fms, p99 %.3fms", e.P50Ms, e.P99Ms)
	case e.PlacementsPerSec <= 0 || e.CeilingPerSec <= 0 || e.CeilingTasks <= 0:
		t.Errorf("e2e: %.0f placements/s, store ceiling %.0f/s on %d tasks", e.PlacementsPerSec, e.CeilingPerSec, e.CeilingTasks)
	}
}

// checkAPI: every job acknowledged and none lost, every task placed and
// running, no spec refused, the figures and the baseline measured.
func checkAPI(t *testing.T, s *harness.Scenario, r *harness.Result) {
	t.Helper()
	a := r.API
	switch {
	case a == nil:
		t.Fatal("no API figures")
	case a.Err != "":
		t.Fatalf("api: %s", a.Err)
	case a.TimedOut:
		t.Fatalf("api timed out: %d of %d jobs running", a.Running, a.Jobs)
	case a.Lost != 0 || a.Refused != 0 || a.Errors != 0:
		t.Errorf("api: %d acknowledged jobs lost, %d specs refused, %d calls failed", a.Lost, a.Refused, a.Errors)
	case a.Running != a.Jobs || a.Jobs == 0:
		t.Errorf("api: %d of %d acknowledged jobs running", a.Running, a.Jobs)
	case s.API.Call == "batch" && a.Jobs != r.Jobs:
		t.Errorf("api: %d of %d jobs acknowledged", a.Jobs, r.Jobs)
	case a.PerSec <= 0 || a.BaselinePerSec <= 0 || a.Ratio <= 0:
		t.Errorf("api: %.0f/s against a baseline of %.0f/s", a.PerSec, a.BaselinePerSec)
	case a.P50Ms <= 0 || a.P50Ms > a.P99Ms:
		t.Errorf("api: p50 %.3fms, p99 %.3fms", a.P50Ms, a.P99Ms)
	}
}

func checkMemory(t *testing.T, r *harness.Result) {
	t.Helper()
	m := r.Memory
	if m == nil {
		return
	}
	switch {
	case m.Err != "":
		t.Fatalf("memory: %s", m.Err)
	case m.TimedOut || m.Pending != r.Tasks:
		t.Errorf("memory: %d of %d tasks pending, timed out %v", m.Pending, r.Tasks, m.TimedOut)
	case m.HeapBytesPerTask <= 0:
		t.Errorf("memory: %.0f heap bytes per pending task", m.HeapBytesPerTask)
	case m.PeakRSSBytes < m.RSSBytes/2 || m.PeakSource == "":
		// The peak is taken without a forced collection: it is at least
		// about what stays after one.
		t.Errorf("memory: peak resident %d bytes (%s) against %d after a collection", m.PeakRSSBytes, m.PeakSource, m.RSSBytes)
	}
}

// The command prints the table with a row per chosen scenario, and JSON
// that reads back.
func TestCommandOutput(t *testing.T) {
	var out, errs bytes.Buffer
	err := run(context.Background(), []string{"-size", "small", "-parts", "core,e2e", "-scenario", "batch-10k,constrained-mix"}, &out, &errs)
	if err != nil {
		t.Fatalf("%v: %s", err, errs.String())
	}
	table := out.String()
	for _, want := range []string{"core dec/s", "core placed/s", "full scan dec/s", "× full scan", "sampled dec/s", "× sampled",
		"sampled quality", "index build", "index MB", "B/host", "e2e placed/s", "p99", "B/pending", "batch-10k", "constrained-mix"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "naive") {
		t.Errorf("the table still calls the full scan naive:\n%s", table)
	}
	if strings.Contains(table, "distinct-10k") {
		t.Errorf("table has a scenario that was not chosen:\n%s", table)
	}

	out.Reset()
	if err := run(context.Background(), []string{"-size", "small", "-parts", "core", "-json", "-scenario", "batch-10k"}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	var rs []harness.Result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, out.String())
	}
	if len(rs) != 1 || rs[0].Scenario != "batch-10k" || rs[0].Core.Placed != rs[0].Tasks {
		t.Errorf("JSON output: %+v", rs)
	}

	out.Reset()
	if err := run(context.Background(), []string{"-list"}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n < 5 {
		t.Errorf("-list printed %d lines:\n%s", n, out.String())
	}
}

func TestCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-scenario", "no-such-scenario"},
		{"-size", "huge", "-parts", "core"},
		{"-budget-scale", "0"},
		{"-parts", "core,gpu"},
		{"stray"},
		{"-small-jobs", "1", "-small-jobs-stores", "embedded,cassandra=nowhere"},
		{"-small-jobs", "1", "-small-jobs-stores", "embedded,cassandra=new", "-cassandra-script", "/no/such/cassandra.sh"},
	} {
		var out, errs bytes.Buffer
		if err := run(context.Background(), args, &out, &errs); err == nil {
			t.Errorf("%v: no error; printed %s", args, out.String())
		}
	}
}

// Go benchmarks over the same scenarios: go test ./tests/bench -run '^$'
// -bench . -benchtime 1x [-args -bench.size=full]. Each reports the figures
// and ratios as metrics.
func BenchmarkScenarios(b *testing.B) {
	all, err := loadScenarios()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range all {
		b.Run(s.Name, func(b *testing.B) {
			var r harness.Result
			for b.Loop() {
				r = harness.Run(context.Background(), s, harness.Options{Size: *benchSize, SkipMemory: true, Binary: binary})
			}
			if r.Err != "" || r.Core.Err != "" {
				b.Fatal(r.Err, r.Core.Err)
			}
			if a := r.API; a != nil {
				if a.Err != "" {
					b.Fatal(a.Err)
				}
				b.ReportMetric(a.PerSec, "jobs/s")
				b.ReportMetric(a.Ratio, "x-baseline")
				b.ReportMetric(a.P99Ms, "p99-ms")
				b.Log(r.Notes())
				return
			}
			b.ReportMetric(r.Core.DecisionsPerSec, "decisions/s")
			b.ReportMetric(r.Core.PlacedPerSec, "core-placed/s")
			b.ReportMetric(r.Core.FullScanDecisionsPerSec, "full-scan-decisions/s")
			b.ReportMetric(r.Core.FullScanRatio, "x-full-scan")
			b.ReportMetric(r.Core.SampledDecisionsPerSec, "sampled-decisions/s")
			b.ReportMetric(r.Core.SampledRatio, "x-sampled")
			b.ReportMetric(r.Core.SampledQuality, "sampled-quality")
			b.ReportMetric(r.Core.IndexBytesPerHost, "index-B/host")
			if e := r.EndToEnd; e != nil {
				b.ReportMetric(e.PlacementsPerSec, "placed/s")
				b.ReportMetric(e.Ratio, "x-store-ceiling")
				b.ReportMetric(e.P99Ms, "p99-ms")
			}
			b.Log(r.Notes())
		})
	}
}

// The host reservation benchmark at its small size: with reservations off
// the big tasks starve (else the benchmark shows nothing), with them on
// every one runs, and the small tasks keep at least 0.9 of their pace.
func TestReservationBenchmark(t *testing.T) {
	r := harness.RunReservation(context.Background(), harness.SizeSmall)
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	var out bytes.Buffer
	if err := harness.ReserveTable(&out, r); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if r.Off.BigRan != 0 {
		t.Errorf("without reservations %d big tasks ran: the churn does not starve them", r.Off.BigRan)
	}
	if r.On.BigRan != r.Size.Big {
		t.Errorf("with reservations %d of %d big tasks ran", r.On.BigRan, r.Size.Big)
	}
	if r.Off.SmallPerMin <= 0 || r.On.SmallPerMin < 0.9*r.Off.SmallPerMin {
		t.Errorf("small tasks per minute: %.0f with reservations against %.0f without", r.On.SmallPerMin, r.Off.SmallPerMin)
	}
}
