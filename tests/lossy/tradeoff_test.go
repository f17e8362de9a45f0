package lossy

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/svgchart"
)

// tradeoff is what BenchmarkDetectionTradeoff measured of one setting.
type tradeoff struct {
	Setting string
	// Run is how long the three regions ran under loss alone, and
	// FalseFailures how often a live region was declared failed by one of
	// the others meanwhile.
	Run           time.Duration
	FalseFailures int
	// ProbesLost, ProbesFailed: every member's probes over the last five
	// minutes of the run.
	ProbesLost, ProbesFailed int
	// Detection is the time to declare a cut-off region failed, per
	// trial, in order.
	Detection []time.Duration
	Err       string
}

// perDay is the false failures per day at the measured rate, and the
// upper end of its 95% confidence interval.
func (r tradeoff) perDay() (rate, upper float64) {
	days := r.Run.Hours() / 24
	return float64(r.FalseFailures) / days, poissonUpper(r.FalseFailures, 0.05) / days
}

// poissonUpper is the mean λ at which seeing k or fewer events has
// probability alpha: the one-sided upper confidence bound of a count (3.0
// for none at 95%).
func poissonUpper(k int, alpha float64) float64 {
	cdf := func(lambda float64) float64 {
		term, sum := math.Exp(-lambda), 0.0
		for i := 0; i <= k; i++ {
			sum += term
			term *= lambda / float64(i+1)
		}
		return sum
	}
	lo, hi := float64(k), float64(k)+50
	for range 100 {
		mid := (lo + hi) / 2
		if cdf(mid) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func (r tradeoff) String() string {
	if r.Err != "" {
		return r.Setting + ": " + r.Err
	}
	det := "no trial detected"
	if d := r.Detection; len(d) > 0 {
		det = fmt.Sprintf("min %.1fs, median %.1fs, max %.1fs over %d trials", d[0].Seconds(), d[len(d)/2].Seconds(), d[len(d)-1].Seconds(), len(d))
	}
	rate, upper := r.perDay()
	return fmt.Sprintf("%s: %d false failures in %s (%.0f per day, at most %.0f at 95%%, 3 regions); probes lost %d, failed %d in the last 5 min of it; detection %s",
		r.Setting, r.FalseFailures, r.Run, rate, upper, r.ProbesLost, r.ProbesFailed, det)
}

// tradeoffColumns are the columns of detection-tradeoff.csv.
var tradeoffColumns = []string{"setting", "run_s", "false_failures", "false_failures_per_day", "false_failures_per_day_95",
	"probes_lost_5m", "probes_failed_5m", "detection_min_s", "detection_median_s", "detection_max_s", "trials"}

// writeTradeoff writes the figures as detection-tradeoff.csv and the
// chart drawn from that table as detection-tradeoff.svg in dir.
func writeTradeoff(dir string, results []tradeoff) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(tradeoffColumns)
	for _, r := range results {
		if r.Err != "" || len(r.Detection) == 0 {
			continue
		}
		d := r.Detection
		rate, upper := r.perDay()
		secs := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
		_ = w.Write([]string{r.Setting, strconv.Itoa(int(r.Run.Seconds())), strconv.Itoa(r.FalseFailures), secs(rate), secs(upper),
			strconv.Itoa(r.ProbesLost), strconv.Itoa(r.ProbesFailed),
			secs(d[0].Seconds()), secs(d[len(d)/2].Seconds()), secs(d[len(d)-1].Seconds()), strconv.Itoa(len(d))})
	}
	w.Flush()
	chart, err := tradeoffChart(b.Bytes())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "detection-tradeoff.csv"), b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "detection-tradeoff.svg"), chart, 0o644)
}

// tradeoffChart draws the table of detection-tradeoff.csv: per setting,
// the median time to declare a cut-off region failed (whiskers min–max)
// against the false failures per day measured (whisker up to the 95%
// upper bound).
func tradeoffChart(table []byte) ([]byte, error) {
	rows, err := csv.NewReader(bytes.NewReader(table)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || !slices.Equal(rows[0], tradeoffColumns) {
		return nil, fmt.Errorf("detection-tradeoff.csv: header %v, want %v", rows[:min(len(rows), 1)], tradeoffColumns)
	}
	chart := &svgchart.Chart{
		Title:  "Failure detection: time to declare a region failed against false failures",
		XLabel: "seconds to declare a cut-off region failed (median; whiskers min–max)",
		YLabel: "live regions declared failed per day", LinearX: true, LinearY: true,
	}
	run, trials := 0.0, 0.0
	for i, row := range rows[1:] {
		f := make([]float64, len(row))
		for j := 1; j < len(row); j++ {
			if f[j], err = strconv.ParseFloat(row[j], 64); err != nil {
				return nil, fmt.Errorf("detection-tradeoff.csv row %d, %s: %w", i+1, tradeoffColumns[j], err)
			}
		}
		chart.Series = append(chart.Series, svgchart.Series{Label: row[0], X: []float64{f[8]}, Y: []float64{f[3]},
			XSpan: [][2]float64{{f[7], f[9]}}, YSpan: [][2]float64{{f[3], f[4]}}})
		run, trials = max(run, f[1]), max(trials, f[10])
	}
	chart.Subtitle = []string{
		fmt.Sprintf("Three regions on 5%% loss and 100 ms ± 50 ms per link, %s of loss alone per setting, then a region cut off %.0f times;",
			strings.TrimSuffix((time.Duration(run)*time.Second).String(), "0s"), trials),
		"target: declared failed within 10 s. Points: false failures per day measured; vertical whiskers up to the 95% upper",
		"bound for the run's length (none seen only bounds the rate; a longer run lowers the bound). BenchmarkDetectionTradeoff.",
	}
	return chart.SVG(), nil
}

// The chart in docs is the one drawn from the table beside it;
// PELOTON_LOSSY_CHART_REWRITE=1 draws it again (after an edit of the
// drawing, or of the table by hand).
func TestTradeoffChartIsDrawnFromItsTable(t *testing.T) {
	dir := filepath.Join("..", "..", "docs")
	table, err := os.ReadFile(filepath.Join(dir, "detection-tradeoff.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := tradeoffChart(table)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "detection-tradeoff.svg")
	if os.Getenv("PELOTON_LOSSY_CHART_REWRITE") != "" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the chart of detection-tradeoff.csv: run with PELOTON_LOSSY_CHART_REWRITE=1", path)
	}
}

// No failure seen bounds the rate at 3.0 per observed time at 95%; the
// bound of a count comes from the Poisson distribution.
func TestPoissonUpper(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want float64
	}{{0, 2.996}, {1, 4.744}, {5, 10.513}} {
		if got := poissonUpper(tc.k, 0.05); math.Abs(got-tc.want) > 0.01 {
			t.Errorf("poissonUpper(%d) = %.3f, want %.3f", tc.k, got, tc.want)
		}
	}
	r := tradeoff{Run: 10 * time.Minute}
	if rate, upper := r.perDay(); rate != 0 || math.Abs(upper-2.996*144) > 2 {
		t.Errorf("none in 10 minutes: %.1f per day, at most %.1f; want 0, about 431", rate, upper)
	}
}

// The chart and the table are written from the figures.
func TestWriteTradeoff(t *testing.T) {
	dir := t.TempDir()
	results := []tradeoff{
		{Setting: "fast", Run: 5 * time.Minute, Detection: []time.Duration{5 * time.Second, 6 * time.Second, 7 * time.Second}},
		{Setting: "slow", Run: 5 * time.Minute, FalseFailures: 1, Detection: []time.Duration{8 * time.Second, 9 * time.Second}},
		{Setting: "broken", Err: "never all alive"},
	}
	if err := writeTradeoff(dir, results); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "detection-tradeoff.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "fast" || rows[1][8] != "6.00" || rows[2][3] != "288.00" {
		t.Fatalf("csv (%v):\n%s", err, raw)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "detection-tradeoff.svg"))
	if err != nil || !bytes.Contains(svg, []byte(">slow<")) || bytes.Contains(svg, []byte("broken")) {
		t.Fatalf("svg (%v):\n%s", err, svg)
	}
}
