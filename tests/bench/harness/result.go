package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is every figure of one scenario run.
type Result struct {
	Scenario string           `json:"scenario"`
	Size     string           `json:"size"`
	About    string           `json:"about"`
	Hosts    int              `json:"hosts"`
	Jobs     int              `json:"jobs"`
	Tasks    int              `json:"tasks"`
	Core     CoreFigures      `json:"core"`
	EndToEnd *EndToEndFigures `json:"endToEnd,omitempty"`
	Memory   *MemoryFigures   `json:"memory,omitempty"`
	Seconds  float64          `json:"seconds"`
	Err      string           `json:"error,omitempty"`
}

// Options choose the parts of a run.
type Options struct {
	Size string
	// SkipEndToEnd and SkipMemory leave out the slow parts.
	SkipEndToEnd bool
	SkipMemory   bool
	// BudgetScale multiplies the scenario's time budgets (default 1).
	BudgetScale float64
}

// Run builds the scenario at opts.Size and measures it: the core, then,
// when their budgets are set, end to end and memory per pending task.
// Temporary stores live under os.TempDir and are removed.
func Run(ctx context.Context, s *Scenario, opts Options) Result {
	start := time.Now()
	res := Result{Scenario: s.Name, Size: opts.Size, About: s.About}
	w, err := s.Build(opts.Size)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	if opts.BudgetScale > 0 {
		w.EndToEndBudget = time.Duration(float64(w.EndToEndBudget) * opts.BudgetScale)
		w.MemoryBudget = time.Duration(float64(w.MemoryBudget) * opts.BudgetScale)
	}
	res.Hosts, res.Jobs, res.Tasks = len(w.Hosts), len(w.Jobs), w.Tasks
	res.Core = RunCore(w)
	if !opts.SkipEndToEnd && w.EndToEndBudget > 0 {
		f := inTempDir(w, func(dir string) EndToEndFigures { return RunEndToEnd(ctx, w, dir) },
			func(err error) EndToEndFigures { return EndToEndFigures{Err: err.Error()} })
		res.EndToEnd = &f
	}
	if !opts.SkipMemory && w.MemoryBudget > 0 {
		f := inTempDir(w, func(dir string) MemoryFigures { return RunMemory(ctx, w, dir) },
			func(err error) MemoryFigures { return MemoryFigures{Err: err.Error()} })
		res.Memory = &f
	}
	res.Seconds = time.Since(start).Seconds()
	return res
}

func inTempDir[F any](w *Workload, run func(dir string) F, fail func(error) F) F {
	dir, err := os.MkdirTemp("", "peloton-bench-"+w.Scenario+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	return run(dir)
}

// Notes joins what a reader must know about a result.
func (r *Result) Notes() string {
	var notes []string
	if r.Err != "" {
		notes = append(notes, "error: "+r.Err)
	}
	c := &r.Core
	if c.Err != "" {
		notes = append(notes, "core error: "+c.Err)
	}
	if c.Unplaced > 0 {
		notes = append(notes, fmt.Sprintf("core left %d unplaced", c.Unplaced))
	}
	if c.Overcommitted > 0 || c.RuleViolations > 0 {
		notes = append(notes, fmt.Sprintf("core CHECK FAILED: %d hosts overcommitted, %d rule violations", c.Overcommitted, c.RuleViolations))
	}
	if r.EndToEnd != nil {
		if n := r.EndToEnd.Note(); n != "" {
			notes = append(notes, n)
		}
	}
	if r.Memory != nil {
		if n := r.Memory.Note(); n != "" {
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}

// TableHeader explains the columns; Table prints it above the rows.
const TableHeader = `core dec/s: placement.Place decisions per second, one goroutine (placement core only);
naive dec/s: exhaustive best-fit scan over a flat host array (placement.NaivePlace), same run, on a prefix of the tasks;
e2e placed/s: tasks whose placement was persisted, per second, from the first job submitted to the last placement
  (jobmgr.Engine + boltstore + sim host manager, in-process);
store ceil/s: baseline for e2e: raw boltstore.WriteTasks of one new placed task record per task, batches of 10,000, same run
  (naive placement has no end-to-end pipeline to compare with);
p50/p99: job submitted to task placement persisted; B/pending: heap (and resident set) bytes per pending task, after GC.`

// Table prints the results as one aligned table.
func Table(out io.Writer, rs []Result) error {
	if _, err := fmt.Fprintln(out, TableHeader); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	width := len("scenario")
	for i := range rs {
		width = max(width, len(rs[i].Scenario))
	}
	fmt.Fprintf(tw, "%-*s\thosts\ttasks\tcore dec/s\tnaive dec/s\tx naive\te2e placed/s\tstore ceil/s\tx ceil\tp50\tp99\tB/pending heap\trss\tpeak rss\t\tnote\n", width, "scenario")
	for i := range rs {
		r := &rs[i]
		c := &r.Core
		// Names padded to one width read left-aligned in right-aligned cells.
		row := []string{fmt.Sprintf("%-*s", width, r.Scenario), count(r.Hosts), count(r.Tasks), rate(c.DecisionsPerSec), rate(c.NaiveDecisionsPerSec), ratio(c.Ratio)}
		if e := r.EndToEnd; e != nil && e.Err == "" {
			row = append(row, rate(e.PlacementsPerSec), rate(e.CeilingPerSec), ratio(e.Ratio), millis(e.P50Ms), millis(e.P99Ms))
		} else {
			row = append(row, "-", "-", "-", "-", "-")
		}
		if m := r.Memory; m != nil && m.Err == "" && m.Pending > 0 {
			row = append(row, fmt.Sprintf("%.0f", m.HeapBytesPerTask), fmt.Sprintf("%.0f", m.RSSBytesPerTask), fmt.Sprintf("%.0f", m.PeakRSSBytesPerTask))
		} else {
			row = append(row, "-", "-", "-")
		}
		row = append(row, "", r.Notes())
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// JSON writes the results as one indented JSON document.
func JSON(out io.Writer, rs []Result) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(rs)
}

func count(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func rate(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	if v >= 10 {
		return fmt.Sprintf("%.0fx", v)
	}
	return fmt.Sprintf("%.2fx", v)
}

func millis(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.1fms", ms)
}
