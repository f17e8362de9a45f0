package federation

import (
	"context"
	"sort"
	"sync"
)

// background is the work a router starts that outlives a call (drills):
// it runs under the router's own context and Close waits for it.
type background struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	errors map[string]uint64 // by loop
}

func newBackground() *background {
	ctx, stop := context.WithCancel(context.Background())
	return &background{ctx: ctx, stop: stop, errors: map[string]uint64{}}
}

// goRun runs f in a goroutine under the router's context.
func (b *background) goRun(f func(ctx context.Context)) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f(b.ctx)
	}()
}

// close cancels the background work and waits for it.
func (b *background) close() {
	b.stop()
	b.wg.Wait()
}

func (b *background) count(loop string) {
	b.mu.Lock()
	b.errors[loop]++
	b.mu.Unlock()
}

// LoopError is the number of errors one background loop reported.
type LoopError struct {
	Loop  string
	Count uint64
}

// reportError logs an error of a background loop and counts it: nothing a
// loop fails at is dropped silently.
func (r *Router) reportError(loop, msg string, err error, args ...any) {
	r.bg.count(loop)
	r.warn(msg, append([]any{"loop", loop, "err", err}, args...)...)
}

// BackgroundErrors lists, by loop, how many errors the router's background
// work (drills, failover, progress pushes, the global pass) reported.
func (r *Router) BackgroundErrors() []LoopError {
	r.bg.mu.Lock()
	defer r.bg.mu.Unlock()
	out := make([]LoopError, 0, len(r.bg.errors))
	for loop, n := range r.bg.errors {
		out = append(out, LoopError{Loop: loop, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Loop < out[j].Loop })
	return out
}
