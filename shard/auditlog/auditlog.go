package auditlog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Log keeps the gateway's audit log in the region's store. A
// record is written before the call's answer goes out, but a store that
// does not answer within wait does not hold the answer up (nor every
// later one: a create during an outage would otherwise wait for the store
// twice). The record waits in memory, behind any others waiting, and run
// writes them in order once the store answers again. At most
// maxQueued wait; past that the oldest are dropped, counted and
// logged.
type Log struct {
	st  store.AuditStore
	ttl time.Duration
	// wait bounds the write a call waits for; flushWait each write of
	// queued records.
	wait, flushWait time.Duration
	log             *slog.Logger

	mu    sync.Mutex
	queue []model.AuditRecord
	// head counts the records ever taken off the queue's front, written or
	// dropped; dropped those dropped since the last report.
	head    uint64
	dropped uint64
	wake    chan struct{}
}

// DefaultRetention is how long audit records are kept unless configured.
const DefaultRetention = 30 * 24 * time.Hour

// Bounds of the audit queue.
const (
	defaultWait      = 2 * time.Second
	defaultFlushWait = 30 * time.Second
	maxQueued        = 100000
	batchSize        = 100 // records per write: a Cassandra batch stays small
)

// New keeps audit records in st for ttl; Run writes those that wait.
func New(st store.AuditStore, ttl time.Duration, log *slog.Logger) *Log {
	return &Log{st: st, ttl: ttl, wait: defaultWait, flushWait: defaultFlushWait, log: log, wake: make(chan struct{}, 1)}
}

func auditRecord(r *pb.AuditRecord) model.AuditRecord {
	return model.AuditRecord{
		Time: r.GetTime().AsTime(), Name: r.GetName(), Method: r.GetMethod(), ForwardedBy: r.GetForwardedBy(),
		RPC: r.GetRpc(), Action: r.GetAction(), Resource: r.GetResource(), Code: r.GetCode(), Message: r.GetMessage(), Region: r.GetRegion(),
	}
}

// Append writes a record, or queues it when the store is behind or does
// not answer in time. It fails only for an error retrying cannot mend.
func (a *Log) Append(ctx context.Context, r *pb.AuditRecord) error {
	rec := auditRecord(r)
	if a.enqueueIfBehind(rec) {
		return nil
	}
	if r.GetCode() == codes.Unavailable.String() {
		// The call found the store (or the leader) unavailable: its
		// record would most likely wait for the same, so it waits in the
		// queue instead of making the refusal later.
		a.mu.Lock()
		a.push(rec)
		a.mu.Unlock()
		a.signal()
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, a.wait)
	err := a.st.AppendAudit(wctx, []model.AuditRecord{rec}, a.ttl)
	cancel()
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	a.mu.Lock()
	first := len(a.queue) == 0
	a.push(rec)
	a.mu.Unlock()
	if first {
		a.log.Warn("audit log: the store does not answer; records wait in memory until it does", "err", err)
	}
	a.signal()
	return nil
}

// enqueueIfBehind queues rec when records already wait, so that order is
// kept and a call does not wait for a store known not to answer.
func (a *Log) enqueueIfBehind(rec model.AuditRecord) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 {
		return false
	}
	a.push(rec)
	return true
}

// push appends to the queue, dropping the oldest past its bound; a.mu held.
func (a *Log) push(rec model.AuditRecord) {
	if len(a.queue) >= maxQueued {
		a.queue = a.queue[1:]
		a.head++
		a.dropped++
	}
	a.queue = append(a.queue, rec)
}

func (a *Log) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Queued says how many records wait for the store.
func (a *Log) Queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}

// Run writes queued records until ctx ends, retrying with a backoff of
// 200ms doubling to 5s while the store does not answer.
func (a *Log) Run(ctx context.Context) {
	const minBackoff, maxBackoff = 200 * time.Millisecond, 5 * time.Second
	backoff := minBackoff
	written := 0
	for {
		a.mu.Lock()
		from := a.head
		batch := append([]model.AuditRecord(nil), a.queue[:min(len(a.queue), batchSize)]...)
		a.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-a.wake:
			}
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, a.flushWait)
		err := a.st.AppendAudit(wctx, batch, a.ttl)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = minBackoff
		written += len(batch)
		a.mu.Lock()
		// Records dropped while the batch was written were its first ones.
		if end := from + uint64(len(batch)); end > a.head {
			a.queue = a.queue[end-a.head:]
			a.head = end
		}
		left, dropped := len(a.queue), a.dropped
		if left == 0 {
			a.queue, a.dropped = nil, 0
		}
		a.mu.Unlock()
		if left == 0 {
			a.log.Info("audit log: the store answers again; waiting records written", "records", written, "dropped", dropped)
			written = 0
		}
	}
}

// List returns the records a request asks for (the newest 100 unless it
// sets a limit).
func (a *Log) List(ctx context.Context, req *pb.ListAuditRequest) ([]*pb.AuditRecord, error) {
	q := store.AuditQuery{Name: req.GetName(), Limit: int(req.GetLimit())}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if req.GetSince() != nil {
		q.Since = req.GetSince().AsTime()
	}
	recs, err := a.st.ListAudit(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]*pb.AuditRecord, len(recs))
	for i, r := range recs {
		out[i] = &pb.AuditRecord{Time: timestamppb.New(r.Time), Name: r.Name, Method: r.Method, ForwardedBy: r.ForwardedBy,
			Rpc: r.RPC, Action: r.Action, Resource: r.Resource, Code: r.Code, Message: r.Message, Region: r.Region}
	}
	return out, nil
}

// Prune frees the space of expired audit records every hour until ctx
// ends.
func (a *Log) Prune(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := a.st.PruneAudit(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("cannot prune the audit log", "err", err)
			} else if n > 0 {
				a.log.Info("pruned the audit log", "records", n)
			}
		}
	}
}
