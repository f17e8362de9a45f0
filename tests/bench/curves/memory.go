package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/tests/bench/harness"
)

// memoryCurve measures bytes per pending task as the number of pending
// tasks grows, the way make bench's memory part does (harness.RunMemory):
// batch-50k's jobs, tasksPerJob tasks each, submitted to an engine with no
// hosts, so every task is created, persisted and queued and none admitted;
// heap in use and resident set after a forced GC, less the same before.
// Beside them, the peak resident set of the whole run (VmHWM, reset before
// each point), less the resident set before it.
func memoryCurve(ctx context.Context, scenarios string, taskSizes []int, tasksPerJob int, budget time.Duration, log func(string, ...any)) (*Curve, error) {
	s, err := loadScenario(scenarios, "batch-50k")
	if err != nil {
		return nil, err
	}
	c := &Curve{
		Name:   "bytes-per-task",
		Title:  "Memory per pending task against pending tasks",
		XLabel: "pending tasks", YLabel: "bytes per pending task", XName: "tasks",
		What: fmt.Sprintf("batch-50k's jobs of %d tasks submitted at once to an in-process shard (jobmgr.Engine on boltstore) with no hosts: "+
			"every task created, persisted and queued. Heap and resident set after a forced GC, less the same before, per task "+
			"(as make bench); peak: the run's peak resident set (VmHWM) less the resident set before it, per task.", tasksPerJob),
		Columns: []string{"tasks", "heap_bytes_per_task", "rss_bytes_per_task", "peak_rss_bytes_per_task", "heap_bytes", "peak_rss_bytes", "seconds"},
		Plots: []Plot{
			{Column: "heap_bytes_per_task", Label: "heap in use, after GC", Growth: CostPerUnit},
			{Column: "rss_bytes_per_task", Label: "resident set, after GC", Growth: CostPerUnit},
			{Column: "peak_rss_bytes_per_task", Label: "peak resident set during the run", Growth: CostPerUnit},
		},
	}
	for _, n := range taskSizes {
		jobs := max(n/tasksPerJob, 1)
		s.Sizes["curve"] = harness.Size{Hosts: 1, Jobs: jobs, TasksPerJob: tasksPerJob, MemoryBudget: harness.Duration(budget)}
		w, err := s.Build("curve")
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "peloton-curves-memory-")
		if err != nil {
			return nil, err
		}
		runtime.GC()
		debug.FreeOSMemory()
		rss0 := statusKB("VmRSS") * 1024
		resetPeak()
		f := harness.RunMemory(ctx, w, dir)
		peak := statusKB("VmHWM") * 1024
		os.RemoveAll(dir)
		if f.Err != "" || f.TimedOut || f.Pending != w.Tasks {
			return nil, fmt.Errorf("memory at %d tasks: %d pending, timed out %v, %s", w.Tasks, f.Pending, f.TimedOut, f.Err)
		}
		peakPer := float64(peak-rss0) / float64(f.Pending)
		log("memory: %d tasks: heap %.0f B/task, rss %.0f, peak rss %.0f (%.1fs)", f.Pending, f.HeapBytesPerTask, f.RSSBytesPerTask, peakPer, f.Seconds)
		c.Rows = append(c.Rows, []float64{float64(f.Pending), f.HeapBytesPerTask, f.RSSBytesPerTask, peakPer,
			float64(f.HeapBytes), float64(peak - rss0), f.Seconds})
	}
	c.Notes = []string{
		"Each pending task costs the same whatever their number: its runtime record, its place in its pool's queue and " +
			"its queued event; nothing is kept per pair of tasks.",
		"The peak resident set is higher than what stays after a GC: the collector lets the heap grow to about twice what " +
			"is live (GOGC=100) before it runs, and the submission's garbage (job specs, store batches) is counted until then. " +
			"At the smallest sizes fixed costs (the store's first pages, runtime arenas) are spread over few tasks.",
	}
	return c, nil
}

// resetPeak resets the process's peak resident set (VmHWM) to its current
// resident set; on systems without it, the peak is the run's so far.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// statusKB reads a "kB" field of /proc/self/status; 0 where there is none.
func statusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
