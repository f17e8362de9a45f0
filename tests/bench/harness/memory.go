package harness

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MemoryFigures are what the shard holds per pending task: the workload's
// jobs submitted to an engine whose cluster has no capacity, so every task
// is created, persisted and queued, and none is admitted.
type MemoryFigures struct {
	Tasks    int  `json:"tasks"`
	Pending  int  `json:"pending"`
	TimedOut bool `json:"timedOut"`
	// Seconds from the first submission until every task was pending.
	Seconds float64 `json:"seconds"`
	// Heap in use and resident set, after garbage collection, with the
	// engine stopped (so no pass is half done), minus the same before the
	// jobs were submitted; divided by Pending.
	HeapBytesPerTask float64 `json:"heapBytesPerTask"`
	RSSBytesPerTask  float64 `json:"rssBytesPerTask"`
	HeapBytes        int64   `json:"heapBytes"`
	RSSBytes         int64   `json:"rssBytes"`
	// PeakRSSBytes is the highest resident set while the jobs were
	// submitted and their tasks created (no forced collection: what the
	// process really took), minus the resident set before; PeakSource
	// says how it was read: "VmHWM" (the kernel's high-water mark, reset
	// through /proc/self/clear_refs before submitting) or "sampled" (the
	// largest of readings every 10 ms, where the mark cannot be reset).
	PeakRSSBytes        int64   `json:"peakRssBytes"`
	PeakRSSBytesPerTask float64 `json:"peakRssBytesPerTask"`
	PeakSource          string  `json:"peakSource,omitempty"`
	Err                 string  `json:"error,omitempty"`
}

// Note reports a timeout.
func (f *MemoryFigures) Note() string {
	switch {
	case f.Err != "":
		return "memory error: " + f.Err
	case f.TimedOut:
		return fmt.Sprintf("memory timed out at %d/%d pending", f.Pending, f.Tasks)
	}
	return ""
}

// memoryInUse collects garbage, returns freed pages to the OS and reads the
// heap in use and the resident set.
func memoryInUse() (heap, rss int64) {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse), residentBytes()
}

// residentBytes reads the resident set size from /proc/self/statm (0 where
// there is no /proc).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// peakRSS follows the resident set's high-water mark from reset to read.
type peakRSS struct {
	stop    chan struct{}
	done    chan struct{}
	sampled int64 // the largest sample
	hwm     bool  // the kernel's mark was reset
}

// startPeak resets the kernel's high-water mark of the resident set (Linux
// 4.0+: "5" to /proc/self/clear_refs) and samples the resident set every
// 10 ms as well, for where the mark cannot be reset.
func startPeak() *peakRSS {
	p := &peakRSS{stop: make(chan struct{}), done: make(chan struct{})}
	p.hwm = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	go func() {
		defer close(p.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			p.sampled = max(p.sampled, residentBytes())
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// read stops sampling and returns the peak and how it was read.
func (p *peakRSS) read() (int64, string) {
	close(p.stop)
	<-p.done
	if p.hwm {
		if kb := statusKB("VmHWM"); kb > 0 {
			return max(kb*1024, p.sampled), "VmHWM"
		}
	}
	return p.sampled, "sampled"
}

// statusKB reads a "Name:   N kB" line of /proc/self/status (0 if none).
func statusKB(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// RunMemory submits every job of the workload at once to an engine with
// no hosts (boltstore in dir) and measures memory per pending task: the
// peak while the tasks are created, and what stays after a collection.
func RunMemory(ctx context.Context, w *Workload, dir string) MemoryFigures {
	f := MemoryFigures{Tasks: w.Tasks}
	r, err := startEngine(ctx, w, dir, true, nil)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	heap0, rss0 := memoryInUse()
	peak := startPeak()
	r.log.begin()
	subCtx, stopSubmitting := context.WithCancel(ctx)
	var (
		wg        sync.WaitGroup
		submitErr error
	)
	failed := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		if submitErr = submit(subCtx, w, r, false); submitErr != nil {
			close(failed)
		}
	}()
	budget := time.NewTimer(w.MemoryBudget)
	select {
	case <-r.log.done:
	case <-budget.C:
		f.TimedOut = true
	case <-failed:
	case <-ctx.Done():
		f.TimedOut = true
	}
	budget.Stop()
	f.Seconds = time.Since(r.log.start).Seconds()
	peakBytes, source := peak.read()
	f.PeakRSSBytes, f.PeakSource = peakBytes-rss0, source
	stopSubmitting()
	wg.Wait()
	if submitErr != nil {
		f.Err = submitErr.Error()
	}
	// Stop the loop so that no pass is in flight, but keep the engine
	// reachable: its state is what is measured.
	r.cancel()
	<-r.done
	f.Pending = r.log.progress().pending
	heap1, rss1 := memoryInUse()
	runtime.KeepAlive(r.engine)
	_ = r.store.Close()
	f.HeapBytes, f.RSSBytes = heap1-heap0, rss1-rss0
	if f.Pending > 0 {
		f.HeapBytesPerTask = float64(f.HeapBytes) / float64(f.Pending)
		f.RSSBytesPerTask = float64(f.RSSBytes) / float64(f.Pending)
		f.PeakRSSBytesPerTask = float64(f.PeakRSSBytes) / float64(f.Pending)
	}
	return f
}
