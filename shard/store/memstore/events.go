package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// storedEvent is an event with the moment it expires.
type storedEvent struct {
	ev      model.Event
	expires time.Time
}

// eventLog is one job's events in Seq order, with each task's events in
// Seq order beside them, so that a query with After and Limit, or with an
// instance, reads only what it returns (and the expired events it skips).
type eventLog struct {
	all    []*storedEvent
	byTask map[uint32][]*storedEvent
}

// searchSeq returns where seq is or would go in events.
func searchSeq(events []*storedEvent, seq uint64) (int, bool) {
	return slices.BinarySearchFunc(events, seq, func(e *storedEvent, seq uint64) int {
		switch {
		case e.ev.Seq < seq:
			return -1
		case e.ev.Seq > seq:
			return 1
		}
		return 0
	})
}

// put adds e to events in Seq order, replacing one of the same Seq; it
// returns the one replaced.
func put(events []*storedEvent, e *storedEvent) ([]*storedEvent, *storedEvent) {
	i, found := searchSeq(events, e.ev.Seq)
	if found {
		old := events[i]
		events[i] = e
		return events, old
	}
	return slices.Insert(events, i, e), nil
}

func (l *eventLog) add(e *storedEvent) {
	var old *storedEvent
	l.all, old = put(l.all, e)
	if old != nil && old.ev.Task != nil {
		in := old.ev.Task.ID.Instance
		if i, found := searchSeq(l.byTask[in], old.ev.Seq); found {
			l.byTask[in] = slices.Delete(l.byTask[in], i, i+1)
		}
	}
	if e.ev.Task != nil {
		in := e.ev.Task.ID.Instance
		l.byTask[in], _ = put(l.byTask[in], e)
	}
}

// AppendEvents stores copies of events, each until its Time plus ttl;
// events already expired are not stored.
func (s *Store) AppendEvents(ctx context.Context, events []model.Event, ttl time.Duration) error {
	if err := codec.CheckEvents(events, ttl); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	now := time.Now()
	staged := make([]*storedEvent, 0, len(events))
	for i := range events {
		if expires := events[i].Time.Add(ttl); now.Before(expires) {
			staged = append(staged, &storedEvent{ev: cloneEvent(&events[i]), expires: expires})
		}
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, e := range staged {
		l := s.events[e.ev.Job]
		if l == nil {
			l = &eventLog{byTask: map[uint32][]*storedEvent{}}
			s.events[e.ev.Job] = l
		}
		l.add(e)
	}
	return nil
}

// ListEvents returns copies of a job's unexpired events in Seq order.
func (s *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]model.Event, error) {
	if err := codec.CheckEventQuery(q); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	l := s.events[q.Job]
	if l == nil {
		return nil, nil
	}
	events := l.all
	if q.Instance != nil {
		events = l.byTask[*q.Instance]
	}
	i, found := searchSeq(events, q.After)
	if found {
		i++
	}
	now := time.Now()
	var out []model.Event
	for _, e := range events[i:] {
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
		if now.Before(e.expires) {
			out = append(out, cloneEvent(&e.ev))
		}
	}
	return out, nil
}

// PruneEvents removes the expired events.
func (s *Store) PruneEvents(ctx context.Context) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	now := time.Now()
	expired := func(e *storedEvent) bool { return !now.Before(e.expires) }
	removed := 0
	for job, l := range s.events {
		n := len(l.all)
		l.all = slices.DeleteFunc(l.all, expired)
		removed += n - len(l.all)
		for in, events := range l.byTask {
			if l.byTask[in] = slices.DeleteFunc(events, expired); len(l.byTask[in]) == 0 {
				delete(l.byTask, in)
			}
		}
		if len(l.all) == 0 {
			delete(s.events, job)
		}
	}
	return removed, nil
}
