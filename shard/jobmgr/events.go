package jobmgr

import (
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Event is a change of a job or a task, numbered within the region.
type Event struct {
	Seq  uint64
	Time time.Time
	Job  model.JobID
	// Exactly one of JobStatus and Task is set.
	JobStatus *model.JobStatus
	Task      *model.TaskRuntime
}

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
		b.seq++
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
