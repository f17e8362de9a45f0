package placebench

import (
	"testing"
)

// The small scenarios run as a test: they must place, and optimised and
// naive must agree on roughly how much fits; both baselines and the index
// must be measured.
func TestSmallScenarios(t *testing.T) {
	for _, s := range Small() {
		f := RunScenario(s)
		t.Log(f)
		if f.Err != "" || f.Placed == 0 || f.NaivePlaced == 0 || f.SampledPlaced == 0 || f.SampledDecisionsPerSec <= 0 ||
			f.SampledQuality.Fraction <= 0 || f.SampledHosts <= 0 || f.IndexBytes.Built <= 0 || f.IndexBytes.Used <= 0 {
			t.Fatalf("%s: %v", s.Name, f)
		}
		if f.Placed+f.Unplaced != f.Tasks {
			t.Fatalf("%s: %d placed + %d unplaced != %d tasks", s.Name, f.Placed, f.Unplaced, f.Tasks)
		}
	}
}

func benchmarkScenario(b *testing.B, s Scenario) {
	var f Figures
	for b.Loop() {
		f = RunScenario(s)
	}
	if f.Err != "" {
		b.Fatal(f.Err)
	}
	b.ReportMetric(f.DecisionsPerSec, "decisions/s")
	b.ReportMetric(f.NaiveDecisionsPerSec, "full-scan-decisions/s")
	b.ReportMetric(f.Ratio, "x-full-scan")
	b.ReportMetric(f.SampledDecisionsPerSec, "sampled-decisions/s")
	b.ReportMetric(f.SampledRatio, "x-sampled")
	b.ReportMetric(f.SampledQuality.Fraction, "sampled-quality")
	b.Log(f)
}

// Run with: go test ./shard/placement/placebench -run '^$' -bench . -benchtime 1x
func BenchmarkEquivalenceBatch50k(b *testing.B) {
	benchmarkScenario(b, EquivalenceBatch(50000, 1000, 1000, 1))
}

func BenchmarkDistinct10k(b *testing.B) {
	benchmarkScenario(b, DistinctTasks(10000, 100000, 1))
}

func BenchmarkConstrainedMix20k(b *testing.B) {
	benchmarkScenario(b, ConstrainedMix(20000, 200, 500, 1))
}
