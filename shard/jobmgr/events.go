package jobmgr

import (
	"context"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// Subscription receives events until it is cancelled or falls behind.
type Subscription struct {
	C <-chan core.Event
	// Lagged is closed when the subscriber fell behind and C was closed.
	Lagged <-chan struct{}
	b      *broadcaster
	ch     chan core.Event
	lagged chan struct{}
	job    model.JobID
}

// Cancel stops the subscription.
func (s *Subscription) Cancel() { s.b.remove(s) }

// broadcaster fans events out to subscribers and keeps a bounded backlog so
// a watcher can resume after a sequence number. The backlog holds events
// in the store's encoding (see eventLog), shared with the event log: a big
// job's last events would otherwise keep a copy of each task's runtime
// long after the job ended.
type broadcaster struct {
	mu      mutex
	seq     uint64
	enc     eventEncoder
	backlog []queuedEvent // a ring: backlog[start] is the oldest of n
	start   int
	n       int
	bytes   int // of the encodings in the backlog
	// gone is the sequence number of the newest event dropped from the
	// backlog: a watcher of all jobs resuming from before it would miss
	// events.
	gone uint64
	subs map[*Subscription]struct{}
}

// The backlog keeps the latest backlogSize events, or fewer when their
// encodings pass backlogBytes; a watcher of one job resuming from further
// back reads the job's stored history.
const (
	backlogSize   = 32768
	backlogBytes  = 2 << 20
	subscriberBuf = 8192
)

func newBroadcaster() *broadcaster {
	return &broadcaster{subs: map[*Subscription]struct{}{}}
}

// keep adds rec to the backlog and drops the oldest past its bounds;
// b.mu held. The ring grows up to backlogSize while it is not wrapped.
func (b *broadcaster) keep(rec queuedEvent) {
	if b.n == len(b.backlog) {
		if len(b.backlog) < backlogSize && b.start == 0 {
			if len(b.backlog) == cap(b.backlog) {
				grown := make([]queuedEvent, len(b.backlog), min(max(2*cap(b.backlog), 1024), backlogSize))
				copy(grown, b.backlog)
				b.backlog = grown
			}
			b.backlog = b.backlog[:len(b.backlog)+1]
		} else {
			b.dropOldest()
		}
	}
	b.backlog[(b.start+b.n)%len(b.backlog)] = rec
	b.n++
	b.bytes += len(rec.rec)
	for b.bytes > backlogBytes && b.n > 1 {
		b.dropOldest()
	}
}

func (b *broadcaster) dropOldest() {
	b.gone = b.backlog[b.start].seq
	b.bytes -= len(b.backlog[b.start].rec)
	b.backlog[b.start] = queuedEvent{}
	b.start = (b.start + 1) % len(b.backlog)
	b.n--
}

// publish numbers events, sends them to subscribers and keeps them in the
// backlog; it returns them encoded, for the store.
func (b *broadcaster) publish(evs []core.Event) []queuedEvent {
	if len(evs) == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	recs := make([]queuedEvent, 0, len(evs))
	checked := codec.CheckEvents(evs, time.Hour) == nil
	for i := range evs {
		// Sequence numbers keep growing across restarts: never below the
		// event's time in microseconds.
		b.seq++
		if t := evs[i].Time.UnixMicro(); t > 0 && uint64(t) > b.seq {
			b.seq = uint64(t)
		}
		evs[i].Seq = b.seq
		if rec, ok := b.enc.encode(evs, i, checked); ok {
			recs = append(recs, rec)
			b.keep(rec)
		}
		for s := range b.subs {
			if s.job != "" && s.job != evs[i].Job {
				continue
			}
			select {
			case s.ch <- evs[i]:
			default:
				delete(b.subs, s)
				close(s.lagged)
				close(s.ch)
			}
		}
	}
	return recs
}

// subscribe registers a subscriber for one job ("" for all) and returns the
// backlog after seq `after` that it missed, and whether events after
// `after` were dropped from the backlog already.
func (b *broadcaster) subscribe(job model.JobID, after uint64) (*Subscription, []core.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gap := after > 0 && after < b.gone
	s := &Subscription{b: b, ch: make(chan core.Event, subscriberBuf), lagged: make(chan struct{}), job: job}
	s.C, s.Lagged = s.ch, s.lagged
	b.subs[s] = struct{}{}
	var missed []core.Event
	if after > 0 {
		for i := range b.n {
			r := b.backlog[(b.start+i)%len(b.backlog)]
			if r.seq > after && (job == "" || r.job == job) {
				if ev, ok := r.decode(); ok {
					missed = append(missed, ev)
				}
			}
		}
	}
	return s, missed, gap
}

func (b *broadcaster) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		close(s.ch)
	}
}

// eventLog writes events to the store in the background, so the history
// outlives the in-memory backlog and restarts. Writing never holds up the
// loop: events queue up (to a bound, past which the oldest are dropped
// and counted) while the store is slow or down, and are retried.
//
// A queued event is kept in the store's own encoding (shard/store/codec),
// a few dozen bytes in shared chunks, and decoded again in batches for the
// store: a task's event would otherwise hold a copy of its runtime (about
// 300 bytes with the event) for as long as the store takes to catch up,
// which is a large part of a shard's memory while a big job starts.
type eventLog struct {
	mu    mutex
	queue []queuedEvent
	first int    // queue[:first] were written and are cleared
	head  uint64 // events ever taken off the queue's front, written or dropped
	// dropped counts events dropped since the last report.
	dropped uint64
	wake    chan struct{}
}

// queuedEvent is an event as the store keeps it: its key and its encoding.
type queuedEvent struct {
	seq uint64
	job model.JobID
	rec []byte
}

func (r queuedEvent) decode() (core.Event, bool) {
	ev, err := codec.DecodeEvent(r.job, r.seq, r.rec)
	return ev, err == nil // encoded here: an error cannot happen
}

// eventEncoder writes encodings into shared chunks.
type eventEncoder struct {
	chunk   []byte // where the next encodings go
	scratch []byte // one event's encoding
}

// eventChunk is the size of the chunks encodings are written to.
const eventChunk = 64 << 10

// encode encodes evs[i]; false for one the store would refuse (none is
// made here). checked says evs passed codec.CheckEvents as a whole.
func (x *eventEncoder) encode(evs []core.Event, i int, checked bool) (queuedEvent, bool) {
	ev := &evs[i]
	if !checked && codec.CheckEvents(evs[i:i+1], time.Hour) != nil {
		return queuedEvent{}, false
	}
	x.scratch = codec.AppendEvent(x.scratch[:0], ev)
	if n := len(x.scratch); cap(x.chunk)-len(x.chunk) < n {
		x.chunk = make([]byte, 0, max(eventChunk, n))
	}
	start := len(x.chunk)
	x.chunk = append(x.chunk, x.scratch...)
	return queuedEvent{seq: ev.Seq, job: ev.Job, rec: x.chunk[start:len(x.chunk):len(x.chunk)]}, true
}

// maxQueuedEvents bounds the events waiting for the store.
const maxQueuedEvents = 1 << 20

func newEventLog() *eventLog { return &eventLog{wake: make(chan struct{}, 1)} }

// add queues encoded events for the store.
func (l *eventLog) add(recs []queuedEvent) {
	if len(recs) == 0 {
		return
	}
	l.mu.Lock()
	l.queue = append(l.queue, recs...)
	if over := len(l.queue) - l.first - maxQueuedEvents; over > 0 {
		l.dropped += uint64(over)
		l.pop(over)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// pop takes n events off the queue's front; l.mu held.
func (l *eventLog) pop(n int) {
	clear(l.queue[l.first : l.first+n])
	l.first += n
	l.head += uint64(n)
	switch rest := len(l.queue) - l.first; {
	case rest == 0:
		// A burst (a big job starting) must not pin its queue.
		l.queue, l.first = nil, 0
	case l.first > rest:
		l.queue = append(l.queue[:0], l.queue[l.first:]...)
		clear(l.queue[rest : l.first+rest])
		l.first = 0
	}
}

// take decodes up to n queued events without removing them; it returns
// them, the number to pass to done once they are written, and the events
// dropped since the last call.
func (l *eventLog) take(n int) ([]core.Event, uint64, uint64) {
	l.mu.Lock()
	recs := append([]queuedEvent(nil), l.queue[l.first:l.first+min(n, len(l.queue)-l.first)]...)
	from, d := l.head, l.dropped
	l.dropped = 0
	l.mu.Unlock()
	evs := make([]core.Event, 0, len(recs))
	for _, r := range recs {
		if ev, ok := r.decode(); ok {
			evs = append(evs, ev)
		}
	}
	return evs, from + uint64(len(recs)), d
}

// done removes the events taken up to upTo (as take returned it) once they
// were written; those dropped meanwhile are gone already.
func (l *eventLog) done(upTo uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if upTo > l.head {
		l.pop(int(upTo - l.head))
	}
}

// Queued says how many events wait for the store.
func (l *eventLog) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue) - l.first
}

// writeEvents runs until ctx ends: it stores queued events in batches and
// frees expired ones now and then.
func (e *Engine) writeEvents(ctx context.Context) {
	const batch = 5000
	backoff := time.Duration(0)
	nextPrune := e.cfg.Clock.Now().Add(time.Minute)
	for {
		evs, upTo, dropped := e.evlog.take(batch)
		if dropped > 0 {
			e.c.Log.Warn("event history: the store fell behind; oldest events dropped", "events", dropped)
		}
		if len(evs) > 0 {
			if err := e.cfg.Store.AppendEvents(ctx, evs, e.cfg.EventRetention); err != nil {
				if ctx.Err() != nil {
					return
				}
				backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
				e.c.Log.Warn("storing events failed; will retry", "events", len(evs), "err", err, "retry", backoff)
				select {
				case <-ctx.Done():
					return
				case <-e.cfg.Clock.After(backoff):
				}
				continue
			}
			backoff = 0
			e.evlog.done(upTo)
			continue
		}
		if now := e.cfg.Clock.Now(); now.After(nextPrune) {
			nextPrune = now.Add(10 * time.Minute)
			if n, err := e.cfg.Store.PruneEvents(ctx); err != nil {
				e.c.Log.Warn("pruning expired events failed", "err", err)
			} else if n > 0 {
				e.c.Log.Info("expired events pruned", "events", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-e.evlog.wake:
		case <-e.cfg.Clock.After(time.Minute):
		}
	}
}

// emit numbers events, sends them to watchers and queues them for the
// store.
func (e *Engine) emit(evs []core.Event) {
	e.evlog.add(e.events.publish(evs))
}
