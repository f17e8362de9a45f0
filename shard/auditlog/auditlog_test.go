package auditlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// flakyAudit is an audit store that can stop answering: "hang" waits for
// the caller's deadline, "refuse" fails at once.
type flakyAudit struct {
	mu   sync.Mutex
	mode string
	recs []model.AuditRecord
}

func (f *flakyAudit) set(mode string) {
	f.mu.Lock()
	f.mode = mode
	f.mu.Unlock()
}

func (f *flakyAudit) AppendAudit(ctx context.Context, recs []model.AuditRecord, _ time.Duration) error {
	f.mu.Lock()
	mode := f.mode
	f.mu.Unlock()
	switch mode {
	case "hang":
		<-ctx.Done()
		return ctx.Err()
	case "refuse":
		return fmt.Errorf("append audit: %w", store.ErrUnavailable)
	case "broken":
		return fmt.Errorf("append audit: %w", store.ErrInvalid)
	}
	f.mu.Lock()
	f.recs = append(f.recs, recs...)
	f.mu.Unlock()
	return nil
}

func (f *flakyAudit) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.recs))
	for i, r := range f.recs {
		out[i] = r.Name
	}
	return out
}

func (f *flakyAudit) ListAudit(context.Context, store.AuditQuery) ([]model.AuditRecord, error) {
	return nil, nil
}
func (f *flakyAudit) PruneAudit(context.Context) (int, error) { return 0, nil }

// A store that stops answering holds a call's audit record up for the
// wait at most, and later calls not at all; once the store answers, every
// record is written, in order.
func TestAuditWaitsForTheStoreInTheBackground(t *testing.T) {
	st := &flakyAudit{}
	a := New(st, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.wait, a.flushWait = 200*time.Millisecond, 200*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	rec := func(name string) *pb.AuditRecord {
		return &pb.AuditRecord{Time: timestamppb.Now(), Name: name, Rpc: "/peloton.v1.JobService/CreateJob", Code: "OK"}
	}
	appendTimed := func(name string) time.Duration {
		start := time.Now()
		if err := a.Append(context.Background(), rec(name)); err != nil {
			t.Fatalf("append %s: %v", name, err)
		}
		return time.Since(start)
	}

	appendTimed("r0")
	st.set("hang")
	if took := appendTimed("r1"); took < a.wait || took > a.wait+time.Second {
		t.Fatalf("the first record with the store hanging took %v, want about the wait %v", took, a.wait)
	}
	for i := 2; i < 5; i++ {
		if took := appendTimed(fmt.Sprintf("r%d", i)); took > 50*time.Millisecond {
			t.Fatalf("a record behind a waiting one took %v: it must not wait for the store", took)
		}
	}
	st.set("refuse")
	appendTimed("r5")
	if n := a.Queued(); n != 5 {
		t.Fatalf("%d records queued, want 5", n)
	}
	st.set("")
	deadline := time.Now().Add(10 * time.Second)
	for a.Queued() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d records still queued after the store came back", a.Queued())
		}
		time.Sleep(20 * time.Millisecond)
	}
	appendTimed("r6")
	want := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6"}
	if got := st.names(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %v, want %v", got, want)
	}

	// The record of a call refused as unavailable does not wait for the
	// store at all: it is queued, and written by the loop.
	st.set("hang")
	start := time.Now()
	refusedRec := rec("r7")
	refusedRec.Code = "Unavailable"
	if err := a.Append(context.Background(), refusedRec); err != nil || time.Since(start) > 50*time.Millisecond || a.Queued() != 1 {
		t.Fatalf("append of a refused call: %v after %v, %d queued; want it queued at once", err, time.Since(start), a.Queued())
	}
	st.set("")
	deadline = time.Now().Add(10 * time.Second)
	for a.Queued() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the refused call's record was not written")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// An error retrying cannot mend is returned, not queued.
	st.set("broken")
	if err := a.Append(context.Background(), rec("r8")); err == nil || a.Queued() != 0 {
		t.Fatalf("append with a broken store: %v, %d queued; want the error and nothing queued", err, a.Queued())
	}
}

// Past its bound the queue drops its oldest records and keeps the newest.
func TestAuditQueueDropsTheOldest(t *testing.T) {
	a := New(&flakyAudit{}, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.mu.Lock()
	for i := 0; i < maxQueued+3; i++ {
		a.push(model.AuditRecord{Name: fmt.Sprint(i)})
	}
	first, n, dropped := a.queue[0].Name, len(a.queue), a.dropped
	a.mu.Unlock()
	if n != maxQueued || first != "3" || dropped != 3 {
		t.Fatalf("queue of %d from %q, %d dropped; want %d from \"3\", 3 dropped", n, first, dropped, maxQueued)
	}
}
