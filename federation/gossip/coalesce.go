package gossip

import (
	"context"
	"time"
)

// Coalescer merges member events: within one batch only the latest event
// per member survives, so a link that flaps Up, Down, Up inside the batch
// yields one MemberUp. User events are never merged. It does no I/O and
// reads no clock; the caller decides when a batch ends.
type Coalescer struct {
	pending []Event
	byName  map[string]int
}

// Add puts e in the current batch.
func (c *Coalescer) Add(e Event) {
	name, ok := memberName(e)
	if !ok {
		c.pending = append(c.pending, e)
		return
	}
	if c.byName == nil {
		c.byName = make(map[string]int)
	}
	if i, seen := c.byName[name]; seen {
		c.pending[i] = e
		return
	}
	c.byName[name] = len(c.pending)
	c.pending = append(c.pending, e)
}

// Len is the number of events the batch would flush.
func (c *Coalescer) Len() int { return len(c.pending) }

// Flush returns the batch, each member at the position of its first event
// in the batch, and starts a new one.
func (c *Coalescer) Flush() []Event {
	out := c.pending
	c.pending = nil
	c.byName = nil
	return out
}

func memberName(e Event) (string, bool) {
	switch e := e.(type) {
	case MemberUp:
		return e.Member.Name, true
	case MemberDown:
		return e.Member.Name, true
	case MemberLeft:
		return e.Member.Name, true
	case MemberUpdated:
		return e.Member.Name, true
	case MemberReaped:
		return e.Member.Name, true
	default:
		return "", false
	}
}

// Timers makes the timers Coalesce waits on; shard/clock's Clock fits.
type Timers interface {
	After(d time.Duration) <-chan time.Time
}

// Coalesce reads in and writes batches of coalesced events to the
// returned channel: a batch starts with the first event after the last
// flush and is flushed window later. The returned channel is closed when
// in is closed (after a last flush) or ctx is done.
func Coalesce(ctx context.Context, in <-chan Event, window time.Duration, timers Timers) <-chan Event {
	out := make(chan Event)
	go func() {
		defer close(out)
		var c Coalescer
		var flushAt <-chan time.Time
		emit := func() bool {
			for _, e := range c.Flush() {
				select {
				case out <- e:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-in:
				if !ok {
					emit()
					return
				}
				c.Add(e)
				if flushAt == nil {
					flushAt = timers.After(window)
				}
			case <-flushAt:
				flushAt = nil
				if !emit() {
					return
				}
			}
		}
	}()
	return out
}
