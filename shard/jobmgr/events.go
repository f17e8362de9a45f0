package jobmgr

import (
	"context"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Event is a change of a job or a task, numbered within the region.
type Event = model.Event

// Subscription receives events until it is cancelled or falls behind.
type Subscription struct {
	C <-chan Event
	// Lagged is closed when the subscriber fell behind and C was closed.
	Lagged <-chan struct{}
	b      *broadcaster
	ch     chan Event
	lagged chan struct{}
	job    model.JobID
}

// Cancel stops the subscription.
func (s *Subscription) Cancel() { s.b.remove(s) }

// broadcaster fans events out to subscribers and keeps a bounded backlog so
// a watcher can resume after a sequence number.
type broadcaster struct {
	mu      sync.Mutex
	seq     uint64
	backlog []Event // ring
	start   int
	subs    map[*Subscription]struct{}
}

const (
	backlogSize   = 65536
	subscriberBuf = 8192
)

func newBroadcaster() *broadcaster {
	return &broadcaster{subs: map[*Subscription]struct{}{}}
}

func (b *broadcaster) publish(evs []Event) {
	if len(evs) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range evs {
		// Sequence numbers keep growing across restarts: never below the
		// event's time in microseconds.
		b.seq++
		if t := evs[i].Time.UnixMicro(); t > 0 && uint64(t) > b.seq {
			b.seq = uint64(t)
		}
		evs[i].Seq = b.seq
		if len(b.backlog) < backlogSize {
			b.backlog = append(b.backlog, evs[i])
		} else {
			b.backlog[b.start] = evs[i]
			b.start = (b.start + 1) % backlogSize
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
}

// subscribe registers a subscriber for one job ("" for all) and returns the
// backlog after seq `after` that it missed.
func (b *broadcaster) subscribe(job model.JobID, after uint64) (*Subscription, []Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Subscription{b: b, ch: make(chan Event, subscriberBuf), lagged: make(chan struct{}), job: job}
	s.C, s.Lagged = s.ch, s.lagged
	b.subs[s] = struct{}{}
	var missed []Event
	if after > 0 {
		n := len(b.backlog)
		for i := 0; i < n; i++ {
			ev := b.backlog[(b.start+i)%n]
			if ev.Seq > after && (job == "" || ev.Job == job) {
				missed = append(missed, ev)
			}
		}
	}
	return s, missed
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
type eventLog struct {
	mu      sync.Mutex
	queue   []Event
	dropped uint64
	wake    chan struct{}
}

// maxQueuedEvents bounds the events waiting for the store.
const maxQueuedEvents = 1 << 20

func newEventLog() *eventLog { return &eventLog{wake: make(chan struct{}, 1)} }

func (l *eventLog) add(evs []Event) {
	if len(evs) == 0 {
		return
	}
	l.mu.Lock()
	l.queue = append(l.queue, evs...)
	if over := len(l.queue) - maxQueuedEvents; over > 0 {
		l.dropped += uint64(over)
		l.queue = append(l.queue[:0], l.queue[over:]...)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns up to n queued events without removing them.
func (l *eventLog) take(n int) ([]Event, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dropped
	l.dropped = 0
	return l.queue[:min(n, len(l.queue)):min(n, len(l.queue))], d
}

// done removes the first n queued events once they were written.
func (l *eventLog) done(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, len(l.queue))
	rest := len(l.queue) - n
	if rest == 0 {
		// A burst (a big job starting) must not pin its queue.
		l.queue = nil
		return
	}
	copy(l.queue, l.queue[n:])
	clear(l.queue[rest:])
	l.queue = l.queue[:rest]
}

// Queued says how many events wait for the store.
func (l *eventLog) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

// writeEvents runs until ctx ends: it stores queued events in batches and
// frees expired ones now and then.
func (e *Engine) writeEvents(ctx context.Context) {
	const batch = 5000
	backoff := time.Duration(0)
	nextPrune := e.cfg.Clock.Now().Add(time.Minute)
	for {
		evs, dropped := e.evlog.take(batch)
		if dropped > 0 {
			e.log.Warn("event history: the store fell behind; oldest events dropped", "events", dropped)
		}
		if len(evs) > 0 {
			if err := e.cfg.Store.AppendEvents(ctx, evs, e.cfg.EventRetention); err != nil {
				if ctx.Err() != nil {
					return
				}
				backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
				e.log.Warn("storing events failed; will retry", "events", len(evs), "err", err, "retry", backoff)
				select {
				case <-ctx.Done():
					return
				case <-e.cfg.Clock.After(backoff):
				}
				continue
			}
			backoff = 0
			e.evlog.done(len(evs))
			continue
		}
		if now := e.cfg.Clock.Now(); now.After(nextPrune) {
			nextPrune = now.Add(10 * time.Minute)
			if n, err := e.cfg.Store.PruneEvents(ctx); err != nil {
				e.log.Warn("pruning expired events failed", "err", err)
			} else if n > 0 {
				e.log.Info("expired events pruned", "events", n)
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
func (e *Engine) emit(evs []Event) {
	e.events.publish(evs)
	e.evlog.add(evs)
}
