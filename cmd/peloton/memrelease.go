package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// The Go runtime keeps the heap it freed for reuse and gives it back to
// the system slowly, and only after a collection finds it free: an idle
// process that held a million-task job would keep most of that memory for
// minutes, with no allocation to start a collection. The embedded store's
// file is read through a mapping, and the pages a big job's transactions
// read stay in the resident set as well. The memory releaser watches how
// many task runtimes the shards dropped from memory and, once many were
// dropped and the shards are quiet again (nothing more dropped, no event
// waiting for the store), collects and returns the free heap at once
// (debug.FreeOSMemory) and drops the store's mapped pages. It looks every
// releaseCheck (a few atomic reads: no cost when idle) and releases at
// most once per releaseGap, so a shard whose tasks keep ending is left to
// the runtime's own pace.
const (
	releaseCheck      = 5 * time.Second
	releaseGap        = 30 * time.Second
	releaseAfterTasks = 10000 // about 5 MiB of runtimes and bookkeeping
)

// releaser is the decision: when to give memory back.
type releaser struct {
	base uint64    // the count at the last release (or at the start)
	last uint64    // the count at the last check
	at   time.Time // the last release
}

// check takes the count of runtimes dropped so far and whether the shards
// are busy (events wait for the store), and says whether to release now:
// at least releaseAfterTasks dropped since the last release, none since
// the last check and nothing busy (the big release is over), and
// releaseGap since the last release. A count that went down (a new engine
// took over) starts again from it.
func (r *releaser) check(count uint64, busy bool, now time.Time) bool {
	if count < r.base || count < r.last {
		r.base, r.last = count, count
		return false
	}
	settled := count == r.last && !busy
	r.last = count
	if !settled || count-r.base < releaseAfterTasks || now.Sub(r.at) < releaseGap {
		return false
	}
	r.base, r.at = count, now
	return true
}

// memorySource is what the releaser watches and releases.
type memorySource interface {
	// dropped counts the task runtimes the shards dropped from memory;
	// busy says whether events wait for the store.
	dropped() (count uint64, busy bool)
	// releaseStore drops the stores' mapped pages.
	releaseStore() error
}

// runMemoryReleaser runs the releaser until ctx ends.
func runMemoryReleaser(ctx context.Context, src memorySource, log *slog.Logger) {
	var r releaser
	r.base, _ = src.dropped()
	r.last = r.base
	t := time.NewTicker(releaseCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			count, busy := src.dropped()
			if !r.check(count, busy, now) {
				continue
			}
			start := time.Now()
			debug.FreeOSMemory()
			if err := src.releaseStore(); err != nil {
				log.Warn("cannot drop the store's mapped pages", "err", err)
			}
			log.Info("memory returned to the system after tasks left memory", "took", time.Since(start).Round(time.Millisecond))
		}
	}
}

// withMemoryReleaser runs run with the memory releaser of the process's
// region runtimes beside it, and stops the releaser when run returns.
func withMemoryReleaser(ctx context.Context, runtimes []*regionRuntime, log *slog.Logger, run func(context.Context) error) error {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runMemoryReleaser(rctx, regionMemory(runtimes), log)
	}()
	err := run(ctx)
	cancel()
	<-done
	return err
}

// regionMemory is the memory of a process's region runtimes.
type regionMemory []*regionRuntime

func (rs regionMemory) dropped() (uint64, bool) {
	var n uint64
	busy := false
	for _, r := range rs {
		r.mu.Lock()
		e := r.engine
		r.mu.Unlock()
		if e != nil { // a standby holds no shard
			n += e.Released()
			busy = busy || e.QueuedEvents() > 0
		}
	}
	return n, busy
}

// releasableStore is a store that can drop the pages it maps.
type releasableStore interface{ ReleaseMemory() error }

func (rs regionMemory) releaseStore() error {
	var first error
	for _, r := range rs {
		if st, ok := r.store.(releasableStore); ok {
			if err := st.ReleaseMemory(); err != nil && first == nil {
				first = fmt.Errorf("region %s: %w", r.name, err)
			}
		}
	}
	return first
}
