package jobmgr

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// hostBook is what the engine remembers of hosts in the store: drains an
// operator set, and when each host was last reported.
type hostBook struct {
	mu   mutex
	recs map[model.HostID]*model.HostRecord
	// writeMu makes writers of records take turns, so that a record read,
	// changed and stored by one is not overwritten with an older copy by
	// another.
	writeMu turn
}

// hostSyncEvery is how often the hosts' records are written; it bounds
// how stale "last seen" is after a restart.
const hostSyncEvery = 30 * time.Second

// hostForget is how long a host that is no longer reported (and not
// drained) is remembered.
const hostForget = 7 * 24 * time.Hour

// loadHosts reads the stored host records and applies their drains.
func (e *Engine) loadHosts(ctx context.Context) error {
	recs, err := e.cfg.Store.ListHosts(ctx)
	if err != nil {
		return fmt.Errorf("read hosts: %w", err)
	}
	e.hosts.mu.Lock()
	defer e.hosts.mu.Unlock()
	e.hosts.recs = make(map[model.HostID]*model.HostRecord, len(recs))
	for _, r := range recs {
		e.hosts.recs[r.Host.ID] = r
		if r.Draining {
			e.cfg.Hosts.SetDraining(r.Host.ID, true)
		}
	}
	return nil
}

// syncHosts writes the records of the hosts reported now, with the time,
// and forgets hosts long gone. It runs until ctx ends.
func (e *Engine) syncHosts(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.cfg.Clock.After(hostSyncEvery):
		}
		if err := e.writeHostRecords(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("storing host records failed; will retry", "err", err)
		}
	}
}

func (e *Engine) writeHostRecords(ctx context.Context) error {
	e.hosts.writeMu.Lock()
	defer e.hosts.writeMu.Unlock()
	now := e.cfg.Clock.Now()
	views := e.cfg.Hosts.Snapshot()
	e.hosts.mu.Lock()
	batch := make([]*model.HostRecord, 0, len(views))
	seen := make(map[model.HostID]bool, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" {
			continue // an allocation on a host not reported (yet)
		}
		seen[v.ID] = true
		batch = append(batch, seenNow(v.Host, e.hosts.recs[v.ID], now))
	}
	var forget []model.HostID
	for id, r := range e.hosts.recs {
		if !seen[id] && !r.Draining && now.Sub(r.LastSeen) > hostForget {
			forget = append(forget, id)
		}
	}
	e.hosts.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), 1000)
		if err := e.cfg.Store.PutHosts(ctx, batch[:n]); err != nil {
			return err
		}
		e.hosts.mu.Lock()
		for _, r := range batch[:n] {
			e.hosts.recs[r.Host.ID] = r
		}
		e.hosts.mu.Unlock()
		batch = batch[n:]
	}
	for _, id := range forget {
		if err := e.cfg.Store.DeleteHost(ctx, id); err != nil {
			return err
		}
		e.hosts.mu.Lock()
		delete(e.hosts.recs, id)
		e.hosts.mu.Unlock()
	}
	return nil
}

// setDrain stores a host's drain and applies it.
func (e *Engine) setDrain(ctx context.Context, id model.HostID, drain bool, reason string, deadline time.Duration) (*model.HostRecord, error) {
	e.hosts.writeMu.Lock()
	defer e.hosts.writeMu.Unlock()
	now := e.cfg.Clock.Now()
	v, reported := e.cfg.Hosts.View(id)
	reported = reported && v.Hostname != ""
	e.hosts.mu.Lock()
	old := e.hosts.recs[id]
	e.hosts.mu.Unlock()
	if old == nil && !reported {
		return nil, fmt.Errorf("host %s: %w", id, ErrNotFound)
	}
	rec := &model.HostRecord{}
	if old != nil {
		*rec = *old
	}
	if reported {
		rec.Host, rec.LastSeen = v.Host, now
	}
	rec.HostPoolTarget = "" // an operator's drain or undrain calls off a host pool move
	if drain {
		if !rec.Draining {
			rec.DrainTime = now
		}
		rec.Draining, rec.DrainReason = true, reason
		rec.DrainDeadline = time.Time{}
		if deadline > 0 {
			rec.DrainDeadline = now.Add(deadline)
		}
	} else {
		rec.Draining, rec.DrainReason, rec.DrainTime, rec.DrainDeadline, rec.Down = false, "", time.Time{}, time.Time{}, false
	}
	if err := e.cfg.Store.PutHosts(ctx, []*model.HostRecord{rec}); err != nil {
		return nil, fmt.Errorf("store host %s: %w", id, err)
	}
	e.hosts.mu.Lock()
	e.hosts.recs[id] = rec
	e.hosts.mu.Unlock()
	if e.cfg.Hosts.SetDraining(id, drain) {
		e.inboxMu.Lock()
		e.hostsMoved = true
		e.staleHosts[id] = true
		e.inboxMu.Unlock()
		e.log.Info("host drain changed", "host", id, "draining", drain, "reason", reason)
		e.wake()
	}
	return e.hostRecord(rec), nil
}

// seenNow is the record of a host reported now, keeping the drain and
// host pool of its stored record (if any).
func seenNow(h model.Host, old *model.HostRecord, now time.Time) *model.HostRecord {
	rec := &model.HostRecord{Host: h, LastSeen: now}
	if old != nil {
		rec.Draining, rec.DrainReason, rec.DrainTime = old.Draining, old.DrainReason, old.DrainTime
		rec.DrainDeadline, rec.Down = old.DrainDeadline, old.Down
		rec.HostPool, rec.HostPoolTarget = old.HostPool, old.HostPoolTarget
	}
	return rec
}

// hostRecord is a record as shown: with the host's current view when it
// is reported, DOWN when it is only remembered.
func (e *Engine) hostRecord(r *model.HostRecord) *model.HostRecord {
	out := *r
	if v, ok := e.cfg.Hosts.View(r.Host.ID); ok && v.Hostname != "" {
		out.Host, out.LastSeen = v.Host, e.cfg.Clock.Now()
	} else {
		out.Host.State = model.HostDown
	}
	return &out
}

// drainHost takes a host out of service: it takes no new work and its
// capacity no longer counts; what runs there goes on. The drain is stored
// and survives restarts.
func (e *Engine) drainHost(ctx context.Context, id model.HostID, reason string, deadline time.Duration) (*model.HostRecord, error) {
	return e.setDrain(ctx, id, true, reason, deadline)
}

// undrainHost puts a draining, drained or down host back into service.
func (e *Engine) undrainHost(ctx context.Context, id model.HostID) (*model.HostRecord, error) {
	return e.setDrain(ctx, id, false, "", 0)
}

// ListHostRecords returns every host the shard knows: those its host
// managers report, and those it remembers from the store, with drains and
// when each was last seen; ordered by id.
func (r Reads) ListHostRecords(ctx context.Context) ([]*model.HostRecord, error) {
	e := r.e
	views := e.cfg.Hosts.Snapshot()
	now := e.cfg.Clock.Now()
	e.hosts.mu.Lock()
	defer e.hosts.mu.Unlock()
	out := make([]*model.HostRecord, 0, len(views)+len(e.hosts.recs))
	seen := map[model.HostID]bool{}
	for i := range views {
		v := &views[i]
		if v.Hostname == "" {
			continue
		}
		seen[v.ID] = true
		out = append(out, seenNow(v.Host, e.hosts.recs[v.ID], now))
	}
	for id, r := range e.hosts.recs {
		if !seen[id] {
			cp := *r
			cp.Host.State = model.HostDown
			out = append(out, &cp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host.ID < out[j].Host.ID })
	return out, nil
}
