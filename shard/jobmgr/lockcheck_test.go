package jobmgr

import (
	"context"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/store/memstore"
)

// TestLockCheckCatchesAStoreCallUnderALock shows that the check the rest
// of the package's tests run under does fail a store call made with an
// engine lock held, and lets the same call through without it.
func TestLockCheckCatchesAStoreCallUnderALock(t *testing.T) {
	if !lockCheck.Load() {
		t.Fatal("the lock check is off in this package's tests")
	}
	e := New(Config{Store: memstore.New()})
	ctx := context.Background()
	if _, err := e.cfg.Store.ListJobs(ctx); err != nil {
		t.Fatalf("a store call with no lock held: %v", err)
	}
	for name, lock := range map[string]func() func(){
		"Engine.mu":       func() func() { e.mu.Lock(); return e.mu.Unlock },
		"Engine.poolsMu":  func() func() { e.poolsMu.RLock(); return e.poolsMu.RUnlock },
		"hostBook.mu":     func() func() { e.hosts.mu.Lock(); return e.hosts.mu.Unlock },
		"broadcaster.mu":  func() func() { e.events.mu.Lock(); return e.events.mu.Unlock },
		"Engine.inboxMu":  func() func() { e.inboxMu.Lock(); return e.inboxMu.Unlock },
		"Engine.mu (try)": func() func() { e.mu.TryLock(); return e.mu.Unlock },
	} {
		t.Run(name, func(t *testing.T) {
			unlock := lock()
			var got any
			func() {
				defer func() { got = recover() }()
				_, _ = e.cfg.Store.ListJobs(ctx)
			}()
			unlock()
			msg, _ := got.(string)
			if !strings.Contains(msg, "store call ListJobs while holding engine lock") || !strings.Contains(msg, strings.TrimSuffix(name, " (try)")) {
				t.Fatalf("a store call under %s: recovered %v, want the lock check's panic naming it", name, got)
			}
		})
	}
	// Another goroutine holding the lock is no fault of the caller's.
	e.mu.Lock()
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		_, _ = e.cfg.Store.ListJobs(ctx)
	}()
	if got := <-done; got != nil {
		t.Fatalf("a store call while another goroutine holds the lock: %v", got)
	}
	e.mu.Unlock()
}
