package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
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
	// API holds an API scenario's figures (it has no core, end-to-end or
	// memory part).
	API     *APIFigures `json:"api,omitempty"`
	Seconds float64     `json:"seconds"`
	Err     string      `json:"error,omitempty"`
}

// Options choose the parts of a run.
type Options struct {
	Size string
	// SkipEndToEnd and SkipMemory leave out the slow parts.
	SkipEndToEnd bool
	SkipMemory   bool
	// BudgetScale multiplies the scenario's time budgets (default 1).
	BudgetScale float64
	// Binary is the peloton binary API scenarios start (`peloton dev`).
	Binary string
	// ServerProfileDir, when set, receives a CPU profile of the server
	// over each API scenario's measured span.
	ServerProfileDir string
}

// IsAPI reports whether the scenario drives a peloton process through
// its API.
func (s *Scenario) IsAPI() bool { return s.API != nil }

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
	if s.IsAPI() {
		z := s.Sizes[opts.Size]
		if opts.BudgetScale > 0 {
			z.APIBudget = Duration(float64(z.APIBudget) * opts.BudgetScale)
		}
		f := inTempDir(w, func(dir string) APIFigures {
			return RunAPI(ctx, s, w, z, apiOptions{bin: opts.Binary, profileDir: opts.ServerProfileDir}, dir)
		}, func(err error) APIFigures { return APIFigures{Err: err.Error()} })
		res.API = &f
		res.Seconds = time.Since(start).Seconds()
		return res
	}
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
	return joinNotes(r.CoreNotes(), r.OtherNotes())
}

// CoreNotes are the notes on the placement core: an error, tasks it left
// unplaced, a failed check.
func (r *Result) CoreNotes() string {
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
	return joinNotes(notes...)
}

// OtherNotes are the notes on the end-to-end and memory parts.
func (r *Result) OtherNotes() string {
	var notes []string
	if r.EndToEnd != nil {
		notes = append(notes, r.EndToEnd.Note())
	}
	if r.Memory != nil {
		notes = append(notes, r.Memory.Note())
	}
	if r.API != nil {
		notes = append(notes, r.API.Note())
	}
	return joinNotes(notes...)
}

func joinNotes(notes ...string) string {
	kept := notes[:0:0]
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	return strings.Join(kept, "; ")
}

// TableHeader explains the columns; Table prints it above the rows.
const TableHeader = `Placement core (one goroutine, placement.Place only):
  core dec/s: tasks handed to Place per second (a task tried again counts again); core placed/s: tasks placed per second;
  full scan dec/s: exhaustive best-fit scan of every host per task (placement.NaivePlace), same run, on a prefix of the tasks;
  sampled dec/s: best fit among a sample of feasible hosts (placement.SampledPlace, kube-scheduler's adaptive
    percentageOfNodesToScore: max(5%, 50% - hosts/125) of the hosts, at least 100), same prefix and snapshot;
  sampled quality: the sampled placement's mean fit (how full the chosen host is in the kinds the task asks for)
    over the full scan's on the same prefix; index build: NewHostIndex from the snapshot;
  index MB, B/host: the host index's live heap after the pass, feasibility groups included (labels not counted).
End to end and memory:
  e2e placed/s: tasks whose placement was persisted, per second, from the first job submitted to the last placement
    (jobmgr.Engine + boltstore + sim host manager, in-process);
  passes, locked/pass, write/pass: the loop's passes in the e2e run, their mean time with the engine's lock held
    (deciding, then taking the write's outcome) and their mean store write (no lock held);
  store ceil/s: baseline for e2e: raw boltstore.WriteTasks of one new placed task record per task, batches of 10,000, same run;
  p50/p99: job submitted to task placement persisted; B/pending: heap (and resident set) bytes per pending task, after GC;
  peak rss: the highest resident set while the tasks were created (VmHWM), per pending task, no forced GC.`

// APITableHeader explains the columns of the API scenarios' table.
const APITableHeader = `API scenarios drive a real "peloton dev" process (sim hosts, embedded store) through its public API.
batch: jobs/s is tasks seen RUNNING through the API (EventService.Watch) per second, from the first CreateJobs
  request to the last task running; acked/s the acknowledgement rate; p50/p99 a job's request to its task running;
  baseline: a fresh boltstore doing each job's least durable work (CreateJobs, then WriteTasks of its placed
  task), in the same batches, same run.
single: jobs/s is jobs created per second by HTTP/JSON CreateJob; p50/p99 of one create; baseline: the same
  clients calling GET /healthz for as long, same run. shed: fraction of calls refused for load (429).
cpu/job: the server's CPU time over the measured span per job acknowledged.`

// Table prints the results as one aligned table, and the API scenarios'
// results as a second one.
func Table(out io.Writer, rs []Result) error {
	var api, rest []Result
	for _, r := range rs {
		if r.API != nil {
			api = append(api, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(rest) > 0 {
		if err := shardTables(out, rest); err != nil {
			return err
		}
	}
	if len(api) > 0 {
		if len(rest) > 0 {
			fmt.Fprintln(out)
		}
		return apiTable(out, api)
	}
	return nil
}

func apiTable(out io.Writer, rs []Result) error {
	if _, err := fmt.Fprintln(out, APITableHeader); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	width := len("scenario")
	for i := range rs {
		width = max(width, len(rs[i].Scenario))
	}
	fmt.Fprintf(tw, "%-*s\tcall\tclients\tjobs\tjobs/s\tacked/s\tp50\tp99\tshed\tbaseline/s\tx base\tcpu/job\ttarget\tmet\t\tnote\n", width, "scenario")
	for i := range rs {
		r := &rs[i]
		a := r.API
		row := []string{fmt.Sprintf("%-*s", width, r.Scenario), a.Call, count(a.Clients), count(a.Jobs)}
		if a.Err == "" || a.Jobs > 0 {
			row = append(row, rate(a.PerSec), rate(a.AckedPerSec), millis(a.P50Ms), millis(a.P99Ms), fmt.Sprintf("%.1f%%", 100*a.Shed),
				rate(a.BaselinePerSec), ratio(a.Ratio), fmt.Sprintf("%.0fµs", a.ServerCPUPerJobUs))
		} else {
			row = append(row, "-", "-", "-", "-", "-", "-", "-", "-")
		}
		target := "-"
		if a.TargetPerSec > 0 {
			target = "≥" + rate(a.TargetPerSec) + "/s"
			if a.TargetP99Ms > 0 {
				target += ", p99≤" + millis(a.TargetP99Ms)
			}
		}
		met := "no"
		if a.Met {
			met = "yes"
		}
		row = append(row, target, met, "", r.Notes())
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// shardTables prints the shard scenarios as two aligned tables: the placement core, then
// end to end and memory.
func shardTables(out io.Writer, rs []Result) error {
	if _, err := fmt.Fprintln(out, TableHeader); err != nil {
		return err
	}
	width := len("scenario")
	for i := range rs {
		width = max(width, len(rs[i].Scenario))
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(out)
	fmt.Fprintf(tw, "%-*s\thosts\ttasks\tcore dec/s\tcore placed/s\tfull scan dec/s\t× full scan\tsampled dec/s\t× sampled\tsampled quality\tindex build\tindex MB\tB/host\t\tnote\n", width, "scenario")
	for i := range rs {
		r := &rs[i]
		c := &r.Core
		// Names padded to one width read left-aligned in right-aligned cells.
		row := []string{fmt.Sprintf("%-*s", width, r.Scenario), count(r.Hosts), count(r.Tasks),
			rate(c.DecisionsPerSec), rate(c.PlacedPerSec), rate(c.FullScanDecisionsPerSec), ratio(c.FullScanRatio),
			rate(c.SampledDecisionsPerSec), ratio(c.SampledRatio), fraction(c.SampledQuality),
			millis(c.IndexBuildSeconds * 1000), megabytes(c.IndexBytes), perHost(c.IndexBytesPerHost), "", r.CoreNotes()}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	measured := false
	for i := range rs {
		measured = measured || rs[i].EndToEnd != nil || rs[i].Memory != nil
	}
	if !measured {
		return nil
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\thosts\ttasks\te2e placed/s\tstore ceil/s\t× ceil\tp50\tp99\tpasses\tlocked/pass\twrite/pass\tB/pending heap\trss\tpeak rss\t\tnote\n", width, "scenario")
	for i := range rs {
		r := &rs[i]
		row := []string{fmt.Sprintf("%-*s", width, r.Scenario), count(r.Hosts), count(r.Tasks)}
		if e := r.EndToEnd; e != nil && e.Err == "" {
			row = append(row, rate(e.PlacementsPerSec), rate(e.CeilingPerSec), ratio(e.Ratio), millis(e.P50Ms), millis(e.P99Ms),
				count(int(e.Passes)), millis(e.StepMs), millis(e.WriteMs))
		} else {
			row = append(row, "-", "-", "-", "-", "-", "-", "-", "-")
		}
		if m := r.Memory; m != nil && m.Err == "" && m.Pending > 0 {
			row = append(row, fmt.Sprintf("%.0f", m.HeapBytesPerTask), fmt.Sprintf("%.0f", m.RSSBytesPerTask), fmt.Sprintf("%.0f", m.PeakRSSBytesPerTask))
		} else {
			row = append(row, "-", "-", "-")
		}
		row = append(row, "", r.OtherNotes())
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
		return fmt.Sprintf("%.0f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

func fraction(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func megabytes(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(b)/1e6)
}

func perHost(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func millis(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.2fms", ms)
}

// Machine describes where the figures come from: cores, CPU model, memory,
// Go version.
func Machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "MemTotal:") {
				var kb int64
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "MemTotal:")), "%d", &kb)
				mem = fmt.Sprintf(", %.1f GiB memory", float64(kb)/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s)%s, %s %s/%s", runtime.NumCPU(), model, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
