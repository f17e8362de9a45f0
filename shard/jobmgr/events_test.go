package jobmgr

import (
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// The event log keeps events encoded and hands them back decoded, in
// order; a batch taken while older events were dropped removes only what
// was taken.
func TestEventLogQueue(t *testing.T) {
	l := newEventLog()
	var enc eventEncoder
	encode := func(evs []core.Event) []queuedEvent {
		var recs []queuedEvent
		for i := range evs {
			if r, ok := enc.encode(evs, i, false); ok {
				recs = append(recs, r)
			}
		}
		return recs
	}
	ev := func(i int) core.Event {
		task := &model.TaskRuntime{ID: model.TaskID{Job: "j", Instance: uint32(i)}, Run: 1, State: model.TaskPending, Revision: uint64(i)}
		return core.Event{Seq: uint64(i + 1), Time: time.Unix(int64(i), 0), Job: "j", Task: task}
	}
	var batch []core.Event
	for i := range 5000 {
		batch = append(batch, ev(i))
	}
	l.add(encode(batch))
	if recs := encode([]core.Event{{Seq: 9999, Job: "j"}}); len(recs) != 0 { // neither a task nor a status
		t.Fatalf("an event the store refuses was encoded: %v", recs)
	}
	evs, upTo, dropped := l.take(3000)
	if len(evs) != 3000 || dropped != 0 {
		t.Fatalf("took %d events, %d dropped; want 3000 and 0", len(evs), dropped)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) || e.Task == nil || e.Task.ID.Instance != uint32(i) || e.Task.Revision != uint64(i) || !e.Time.Equal(time.Unix(int64(i), 0)) {
			t.Fatalf("event %d read back as %+v", i, e)
		}
	}
	l.done(upTo)
	if n := l.queued(); n != 2000 {
		t.Fatalf("%d queued after writing 3000 of 5000", n)
	}
	evs, upTo, _ = l.take(10000)
	if len(evs) != 2000 || evs[0].Seq != 3001 {
		t.Fatalf("second take: %d events from seq %d", len(evs), evs[0].Seq)
	}
	// More arrive while those are written; the queue overflows meanwhile.
	var flood []core.Event
	for i := range maxQueuedEvents {
		flood = append(flood, ev(5000+i))
	}
	l.add(encode(flood))
	l.done(upTo) // the 2000 were dropped by the overflow already
	if n := l.queued(); n != maxQueuedEvents {
		t.Fatalf("%d queued, want the bound %d", n, maxQueuedEvents)
	}
	evs, _, dropped = l.take(1)
	if dropped != 2000 || evs[0].Seq != 5001 {
		t.Fatalf("after the overflow: first seq %d, %d dropped; want 5001 and 2000", evs[0].Seq, dropped)
	}
}

// The backlog keeps the latest events within its count and its bytes, and
// a subscriber resuming finds those after its sequence number.
func TestBacklogBounds(t *testing.T) {
	b := newBroadcaster()
	task := func(i int, msg string) core.Event {
		return core.Event{Time: time.Unix(1, 0), Job: "j", Task: &model.TaskRuntime{ID: model.TaskID{Job: "j", Instance: uint32(i)}, Message: msg}}
	}
	var evs []core.Event
	for i := range backlogSize + 10 {
		evs = append(evs, task(i, ""))
	}
	b.publish(evs)
	if n := b.n; n != backlogSize {
		t.Fatalf("backlog of %d events, want %d", n, backlogSize)
	}
	_, missed, gap := b.subscribe("j", evs[backlogSize+5].Seq)
	if len(missed) != 4 || missed[0].Task.ID.Instance != uint32(backlogSize+6) || gap {
		t.Fatalf("resumed with %d events, gap %v", len(missed), gap)
	}
	// Resuming from before the oldest event held is a gap; from the last
	// event dropped or later is not.
	if _, _, gap := b.subscribe("", evs[8].Seq); !gap {
		t.Fatal("resuming after an event older than the backlog's oldest: no gap reported")
	}
	if _, _, gap := b.subscribe("", evs[9].Seq); gap {
		t.Fatal("resuming after the last event dropped: a gap reported")
	}
	// Big events: the bytes bound holds.
	big := strings.Repeat("x", 64<<10)
	var large []core.Event
	for i := range 200 {
		large = append(large, task(i, big))
	}
	b.publish(large)
	if b.bytes > backlogBytes+len(big)+1024 || b.n > backlogBytes/len(big)+1 {
		t.Fatalf("backlog holds %d bytes in %d events, bound %d", b.bytes, b.n, backlogBytes)
	}
	_, missed, _ = b.subscribe("j", large[198].Seq)
	if len(missed) != 1 || missed[0].Task.Message != big {
		t.Fatalf("resumed with %d events", len(missed))
	}
}
