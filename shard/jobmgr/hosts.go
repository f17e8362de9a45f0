package jobmgr

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"github.com/peloton-federated/peloton/shard/store/kinds"

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

// hostShell is the host records' shell (shard/maintenance decides
// drains): the records loaded at recovery and kept in step with what the
// plugins report, and the commands that drain, undrain and mark a host
// down.
type hostShell struct{ e *Engine }

// load reads the stored host records and applies their drains.
func (s *hostShell) load(ctx context.Context) error {
	recs, err := kinds.Hosts.List(ctx, s.e.cfg.Store)
	if err != nil {
		return fmt.Errorf("read hosts: %w", err)
	}
	s.e.hosts.mu.Lock()
	s.e.hosts.recs = make(map[model.HostID]*model.HostRecord, len(recs))
	s.e.hosts.mu.Unlock()
	s.e.hold()
	s.e.c.HostRecs = make(map[model.HostID]*model.HostRecord, len(recs))
	s.e.mu.Unlock()
	s.keepRecords(recs, nil)
	for _, r := range recs {
		if r.Draining {
			s.e.cfg.Hosts.SetDraining(r.Host.ID, true)
		}
	}
	return nil
}

// keepRecords takes in stored host records, and forgets those of
// forget: in the book readers read, and in the core's copy the passes
// decide on. A record is never changed once kept (a writer keeps a new
// one), so both hold the same records.
func (s *hostShell) keepRecords(put []*model.HostRecord, forget []model.HostID) {
	s.e.hosts.mu.Lock()
	for _, r := range put {
		s.e.hosts.recs[r.Host.ID] = r
	}
	for _, id := range forget {
		delete(s.e.hosts.recs, id)
	}
	s.e.hosts.mu.Unlock()
	s.e.hold()
	defer s.e.mu.Unlock()
	for _, r := range put {
		s.e.c.HostRecs[r.Host.ID] = r
	}
	for _, id := range forget {
		delete(s.e.c.HostRecs, id)
	}
}

// sync writes the records of the hosts reported now, with the time,
// and forgets hosts long gone. It runs until ctx ends.
func (s *hostShell) sync(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.e.cfg.Clock.After(hostSyncEvery):
		}
		if err := s.writeRecords(ctx); err != nil && ctx.Err() == nil {
			s.e.c.Log.Warn("storing host records failed; will retry", "err", err)
		}
	}
}

func (s *hostShell) writeRecords(ctx context.Context) error {
	s.e.hosts.writeMu.Lock()
	defer s.e.hosts.writeMu.Unlock()
	now := s.e.cfg.Clock.Now()
	views := s.e.cfg.Hosts.Snapshot()
	s.e.hosts.mu.Lock()
	batch := make([]*model.HostRecord, 0, len(views))
	seen := make(map[model.HostID]bool, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" {
			continue // an allocation on a host not reported (yet)
		}
		seen[v.ID] = true
		batch = append(batch, seenNow(v.Host, s.e.hosts.recs[v.ID], now))
	}
	var forget []model.HostID
	for id, r := range s.e.hosts.recs {
		if !seen[id] && !r.Draining && now.Sub(r.LastSeen) > hostForget {
			forget = append(forget, id)
		}
	}
	s.e.hosts.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), 1000)
		if err := kinds.Hosts.Put(ctx, s.e.cfg.Store, batch[:n]); err != nil {
			return err
		}
		s.keepRecords(batch[:n], nil)
		batch = batch[n:]
	}
	for _, id := range forget {
		if err := kinds.Hosts.Delete(ctx, s.e.cfg.Store, string(id)); err != nil {
			return err
		}
		s.keepRecords(nil, []model.HostID{id})
	}
	return nil
}

// setDrain stores a host's drain and applies it.
func (s *hostShell) setDrain(ctx context.Context, id model.HostID, drain bool, reason string, deadline time.Duration) (*model.HostRecord, error) {
	now := s.e.cfg.Clock.Now()
	rec, changed, err := s.change(ctx, id, func(rec *model.HostRecord) error {
		rec.HostPoolTarget = "" // an operator's drain or undrain calls off a host pool move
		if !drain {
			rec.Draining, rec.DrainReason, rec.DrainTime, rec.DrainDeadline, rec.Down = false, "", time.Time{}, time.Time{}, false
			return nil
		}
		if !rec.Draining {
			rec.DrainTime = now
		}
		rec.Draining, rec.DrainReason = true, reason
		rec.DrainDeadline = time.Time{}
		if deadline > 0 {
			rec.DrainDeadline = now.Add(deadline)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if changed {
		s.e.c.Log.Info("host drain changed", "host", id, "draining", drain, "reason", reason)
	}
	return rec, nil
}

// change applies fn to a host's record (a copy of what is kept, with the
// host as reported now), stores it, keeps it, applies its drain and has
// the next pass look at the host again. It reports whether the host's
// draining changed.
func (s *hostShell) change(ctx context.Context, id model.HostID, fn func(rec *model.HostRecord) error) (*model.HostRecord, bool, error) {
	s.e.hosts.writeMu.Lock()
	defer s.e.hosts.writeMu.Unlock()
	now := s.e.cfg.Clock.Now()
	v, reported := s.e.cfg.Hosts.View(id)
	reported = reported && v.Hostname != ""
	s.e.hosts.mu.Lock()
	old := s.e.hosts.recs[id]
	s.e.hosts.mu.Unlock()
	if old == nil && !reported {
		return nil, false, fmt.Errorf("host %s: %w", id, core.ErrNotFound)
	}
	rec := &model.HostRecord{}
	if old != nil {
		*rec = *old
	}
	if reported {
		rec.Host, rec.LastSeen = v.Host, now
	}
	if err := fn(rec); err != nil {
		return nil, false, err
	}
	if err := kinds.Hosts.Put(ctx, s.e.cfg.Store, []*model.HostRecord{rec}); err != nil {
		return nil, false, fmt.Errorf("store host %s: %w", id, err)
	}
	s.keepRecords([]*model.HostRecord{rec}, nil)
	changed := s.e.cfg.Hosts.SetDraining(id, rec.Draining)
	s.e.inboxMu.Lock()
	s.e.hostsMoved = true
	s.e.staleHosts[id] = true
	s.e.inboxMu.Unlock()
	s.e.wake()
	return s.record(rec), changed, nil
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

// record is a record as shown: with the host's current view when it
// is reported, DOWN when it is only remembered.
func (s *hostShell) record(r *model.HostRecord) *model.HostRecord {
	out := *r
	if v, ok := s.e.cfg.Hosts.View(r.Host.ID); ok && v.Hostname != "" {
		out.Host, out.LastSeen = v.Host, s.e.cfg.Clock.Now()
	} else {
		out.Host.State = model.HostDown
	}
	return &out
}

// drain takes a host out of service: it takes no new work and its
// capacity no longer counts; what runs there goes on. The drain is stored
// and survives restarts.
func (s *hostShell) drain(ctx context.Context, id model.HostID, reason string, deadline time.Duration) (*model.HostRecord, error) {
	return s.setDrain(ctx, id, true, reason, deadline)
}

// undrain puts a draining, drained or down host back into service.
func (s *hostShell) undrain(ctx context.Context, id model.HostID) (*model.HostRecord, error) {
	return s.setDrain(ctx, id, false, "", 0)
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
