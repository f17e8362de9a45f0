package cassandra

import (
	"context"
	"sync"
)

// parallel runs fn(ctx, i) for i in [0, n) with at most limit calls at a
// time, and returns the first error; after one, the calls not yet started
// are not made and ctx passed to running ones is cancelled.
func parallel(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		slots = make(chan struct{}, max(limit, 1))
	)
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil {
		// Cancelled from outside before every call was made.
		return ctx.Err()
	}
	return first
}
