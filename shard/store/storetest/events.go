package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// seqBase is where the tests' event numbers start: like the real ones,
// past the current time in microseconds.
const seqBase = 1_800_000_000_000_000

// jobEvents returns n job status events of job numbered from first.
func jobEvents(job model.JobID, first uint64, n int) []model.Event {
	out := make([]model.Event, n)
	for i := range out {
		st := FullJob(job).Status
		st.Message = fmt.Sprint("job event ", i)
		out[i] = model.Event{Seq: first + uint64(i), Time: time.Now().In(fixtureZone), Job: job, JobStatus: &st}
	}
	return out
}

// taskEvents returns rounds events of each of instances tasks of job
// (instances 0, 1, ...), numbered from first, a round of every task at a
// time.
func taskEvents(job model.JobID, first uint64, instances, rounds int) []model.Event {
	out := make([]model.Event, 0, instances*rounds)
	for r := range rounds {
		for i := range instances {
			task := FullTask(model.TaskID{Job: job, Instance: uint32(i)})
			task.Revision = uint64(r + 1)
			out = append(out, model.Event{Seq: first + uint64(len(out)), Time: time.Now(), Job: job, Task: task})
		}
	}
	return out
}

func listEvents(t testing.TB, s store.Store, q store.EventQuery) []model.Event {
	t.Helper()
	events, err := s.ListEvents(context.Background(), q)
	mustNil(t, err, fmt.Sprintf("ListEvents %+v", q))
	return events
}

// requireEvents fails unless got are the events of want with the given
// seqs, in that order.
func requireEvents(t testing.TB, what string, got []model.Event, want map[uint64]model.Event, seqs []uint64) {
	t.Helper()
	wantEvents := make([]model.Event, len(seqs))
	for i, seq := range seqs {
		wantEvents[i] = want[seq]
	}
	if len(got) != len(seqs) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(seqs))
	}
	for i := range got {
		requireEvent(t, fmt.Sprintf("%s: event %d", what, i), got[i], wantEvents[i])
	}
}

// requireEvent fails unless got equals want once both are normalised,
// showing what the pointers point to.
func requireEvent(t testing.TB, what string, got, want model.Event) {
	t.Helper()
	g, w := Normal(got), Normal(want)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s differs:\n got: %+v %+v %+v\nwant: %+v %+v %+v", what, g, g.JobStatus, g.Task, w, w.JobStatus, w.Task)
	}
}

func bySeq(events []model.Event) map[uint64]model.Event {
	m := make(map[uint64]model.Event, len(events))
	for _, e := range events {
		m[e.Seq] = e
	}
	return m
}

// seqsOf returns the seqs of the events keep selects, ascending.
func seqsOf(events []model.Event, keep func(model.Event) bool) []uint64 {
	var out []uint64
	for _, e := range events {
		if keep(e) {
			out = append(out, e.Seq)
		}
	}
	slices.Sort(out)
	return out
}

func testEventsRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	jobEvent := jobEvents("j", seqBase, 1)[0]
	task := FullTask(model.TaskID{Job: "j", Instance: 70_000})
	task.Revision = 12
	taskEvent := model.Event{Seq: seqBase + 1, Time: time.Now().In(fixtureZone), Job: "j", Task: task}
	if zero := zeroFieldPaths(taskEvent); !slices.Equal(zero, []string{".HostPoolMove", ".JobStatus"}) {
		t.Fatalf("task event leaves fields zero: %v", zero)
	}
	mustNil(t, s.AppendEvents(ctx, []model.Event{taskEvent, jobEvent}, time.Hour), "AppendEvents")
	stored := bySeq([]model.Event{jobEvent, Normal(taskEvent)})
	task.Message = "changed" // the store keeps its own copy
	got := listEvents(t, s, store.EventQuery{Job: "j"})
	requireUTC(t, "event", &got[0])
	requireUTC(t, "event", &got[1])
	requireEvents(t, "events", got, stored, []uint64{seqBase, seqBase + 1})
	if got[1].Task.Message == "changed" {
		t.Fatal("stored task event aliases the caller's task")
	}
	got[0].JobStatus.TaskStates[model.TaskFailed] = 1000
	requireEvents(t, "events after the reader changed its copy", listEvents(t, s, store.EventQuery{Job: "j"}),
		stored, []uint64{seqBase, seqBase + 1})
	// Appending an event again (a retry) stores it once.
	mustNil(t, s.AppendEvents(ctx, []model.Event{jobEvent}, time.Hour), "AppendEvents again")
	if n := len(listEvents(t, s, store.EventQuery{Job: "j"})); n != 2 {
		t.Fatalf("after a repeated append %d events, want 2", n)
	}
	if got := listEvents(t, s, store.EventQuery{Job: "none"}); len(got) != 0 {
		t.Fatalf("a job without events lists %d", len(got))
	}
	// Host pool moves are kept under their own key.
	move := model.Event{Seq: seqBase + 2, Time: time.Now().In(fixtureZone), Job: model.HostPoolEvents,
		HostPoolMove: &model.HostPoolMove{Host: "sim/h1", From: "services", To: "batch",
			Phase: model.HostPoolMoveDone, Reason: "batch: 4 cpu pending", Waited: 1500 * time.Millisecond}}
	if zero := zeroFieldPaths(move); !slices.Equal(zero, []string{".JobStatus", ".Task"}) {
		t.Fatalf("host pool move event leaves fields zero: %v", zero)
	}
	mustNil(t, s.AppendEvents(ctx, []model.Event{move}, time.Hour), "AppendEvents of a host pool move")
	requireEvents(t, "host pool moves", listEvents(t, s, store.EventQuery{Job: model.HostPoolEvents}),
		bySeq([]model.Event{Normal(move)}), []uint64{seqBase + 2})
}

// spreadEvents returns events of job "j" (and a few of "j2") across task
// partitions and job events, in random order, with seqs that skip about
// and one past 2^63.
func spreadEvents() []model.Event {
	rng := rand.New(rand.NewPCG(3, 9))
	var events []model.Event
	seq := uint64(seqBase)
	for i := range 200 {
		seq += 1 + uint64(rng.IntN(3))
		if i == 199 {
			seq = 1<<63 + 5
		}
		switch i % 4 {
		case 0:
			events = append(events, jobEvents("j", seq, 1)...)
		default:
			instance := []uint32{0, 5, 9_999, 10_000, 25_000, 99_999}[rng.IntN(6)]
			task := FullTask(model.TaskID{Job: "j", Instance: instance})
			task.Revision = uint64(i)
			events = append(events, model.Event{Seq: seq, Time: time.Now(), Job: "j", Task: task})
		}
	}
	// Another job's events, numbered apart (bySeq keys by Seq alone).
	events = append(events, jobEvents("j2", seqBase+1_000_000, 3)...)
	rng.Shuffle(len(events), func(a, b int) { events[a], events[b] = events[b], events[a] })
	return events
}

func testEventsOrderAfterLimit(t *testing.T, s store.Store) {
	ctx := context.Background()
	events := spreadEvents()
	mustNil(t, s.AppendEvents(ctx, events[:120], time.Hour), "AppendEvents")
	mustNil(t, s.AppendEvents(ctx, events[120:], time.Hour), "AppendEvents")
	want := bySeq(events)
	ofJ := func(e model.Event) bool { return e.Job == "j" }
	all := seqsOf(events, ofJ)
	requireEvents(t, "all events", listEvents(t, s, store.EventQuery{Job: "j"}), want, all)
	requireEvents(t, "events after the 50th", listEvents(t, s, store.EventQuery{Job: "j", After: all[49]}), want, all[50:])
	requireEvents(t, "events after a gap", listEvents(t, s, store.EventQuery{Job: "j", After: all[49] + 1}), want,
		seqsOf(events, func(e model.Event) bool { return ofJ(e) && e.Seq > all[49]+1 }))
	requireEvents(t, "first 7", listEvents(t, s, store.EventQuery{Job: "j", Limit: 7}), want, all[:7])
	requireEvents(t, "7 after the 100th", listEvents(t, s, store.EventQuery{Job: "j", After: all[99], Limit: 7}), want, all[100:107])
	if got := listEvents(t, s, store.EventQuery{Job: "j", After: all[len(all)-1]}); len(got) != 0 {
		t.Fatalf("events after the last: %d", len(got))
	}
	if got := listEvents(t, s, store.EventQuery{Job: "j", After: 1<<64 - 1}); len(got) != 0 {
		t.Fatalf("events after the largest seq: %d", len(got))
	}
	// Paging with After and Limit visits every event once.
	var paged []model.Event
	for after := uint64(0); ; {
		page := listEvents(t, s, store.EventQuery{Job: "j", After: after, Limit: 16})
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1].Seq
	}
	requireEvents(t, "paged events", paged, want, all)
}

func testEventsOfOneInstance(t *testing.T, s store.Store) {
	ctx := context.Background()
	events := spreadEvents()
	mustNil(t, s.AppendEvents(ctx, events, time.Hour), "AppendEvents")
	want := bySeq(events)
	for _, instance := range []uint32{0, 5, 10_000, 99_999, 7} {
		of := func(e model.Event) bool { return e.Job == "j" && e.Task != nil && e.Task.ID.Instance == instance }
		seqs := seqsOf(events, of)
		q := store.EventQuery{Job: "j", Instance: &instance}
		requireEvents(t, fmt.Sprint("events of instance ", instance), listEvents(t, s, q), want, seqs)
		if len(seqs) < 3 {
			continue
		}
		q.After, q.Limit = seqs[0], 1
		requireEvents(t, fmt.Sprint("second event of instance ", instance), listEvents(t, s, q), want, seqs[1:2])
	}
}

func testEventsExpire(t *testing.T, s store.Store) {
	ctx := context.Background()
	short := jobEvents("j", seqBase, 3)
	long := append(jobEvents("j", seqBase+10, 2), taskEvents("j", seqBase+20, 2, 1)...)
	past := jobEvents("j", seqBase+5, 1)
	past[0].Time = time.Now().Add(-time.Hour) // its retention has passed already
	mustNil(t, s.AppendEvents(ctx, append(short, past...), time.Second), "AppendEvents")
	mustNil(t, s.AppendEvents(ctx, long, time.Hour), "AppendEvents")
	want := bySeq(append(short, long...))
	if got := listEvents(t, s, store.EventQuery{Job: "j"}); len(got) != 5 && len(got) != 7 {
		t.Fatalf("before expiry %d events listed, want 7 (or 5 if a slow run let some expire)", len(got))
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(listEvents(t, s, store.EventQuery{Job: "j"})) != len(long) {
		if time.Now().After(deadline) {
			t.Fatalf("events with a ttl of 1 s still listed after 15 s: %d", len(listEvents(t, s, store.EventQuery{Job: "j"})))
		}
		time.Sleep(100 * time.Millisecond)
	}
	requireEvents(t, "unexpired events", listEvents(t, s, store.EventQuery{Job: "j"}), want, seqsOf(long, func(model.Event) bool { return true }))
	requireEvents(t, "unexpired events after one", listEvents(t, s, store.EventQuery{Job: "j", Limit: 1}), want, []uint64{seqBase + 10})
	n, err := s.PruneEvents(ctx)
	mustNil(t, err, "PruneEvents")
	if n != 0 && n != len(short) {
		t.Fatalf("PruneEvents removed %d events, want %d (or 0 where the backend expires them)", n, len(short))
	}
	if again, err := s.PruneEvents(ctx); err != nil || again != 0 {
		t.Fatalf("second PruneEvents removed %d, %v", again, err)
	}
	requireEvents(t, "events after prune", listEvents(t, s, store.EventQuery{Job: "j"}), want, seqsOf(long, func(model.Event) bool { return true }))
}

func testEventsInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	good := jobEvents("j", seqBase, 2)
	both := good[0]
	both.Task = FullTask(model.TaskID{Job: "j"})
	neither := good[0]
	neither.JobStatus = nil
	noJob := good[0]
	noJob.Job = ""
	foreign := model.Event{Seq: seqBase, Time: time.Now(), Job: "j", Task: FullTask(model.TaskID{Job: "k"})}
	move := &model.HostPoolMove{Host: "sim/h1", From: "a", To: "b", Phase: model.HostPoolMoveDone}
	moveOfJob := good[0]
	moveOfJob.JobStatus, moveOfJob.HostPoolMove = nil, move
	moveAndTask := model.Event{Seq: seqBase, Time: time.Now(), Job: model.HostPoolEvents, HostPoolMove: move,
		Task: FullTask(model.TaskID{Job: model.HostPoolEvents})}
	for name, bad := range map[string]model.Event{"both": both, "neither": neither, "no job": noJob, "foreign task": foreign,
		"a move under a job": moveOfJob, "a move and a task": moveAndTask} {
		if err := s.AppendEvents(ctx, []model.Event{good[1], bad}, time.Hour); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendEvents with an event with %s: %v, want ErrInvalid", name, err)
		}
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if err := s.AppendEvents(ctx, good, ttl); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendEvents with ttl %v: %v, want ErrInvalid", ttl, err)
		}
	}
	if _, err := s.ListEvents(ctx, store.EventQuery{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ListEvents without a job: %v, want ErrInvalid", err)
	}
	if got := listEvents(t, s, store.EventQuery{Job: "j"}); len(got) != 0 {
		t.Fatalf("rejected appends stored %d events", len(got))
	}
	mustNil(t, s.AppendEvents(ctx, nil, time.Hour), "AppendEvents of none")
}

// testManyEvents appends the events of a large job in bulk, thousands per
// call, and reads them by instance and in pages.
func testManyEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	instances, rounds, perCall := 30_000, 2, 10_000
	if testing.Short() {
		instances, rounds, perCall = 3_000, 2, 1_000
	}
	events := append(jobEvents("big", seqBase, 10), taskEvents("big", seqBase+10, instances, rounds)...)
	for first := 0; first < len(events); first += perCall {
		mustNil(t, s.AppendEvents(ctx, events[first:min(len(events), first+perCall)], time.Hour), "AppendEvents")
	}
	want := bySeq(events)
	all := listEvents(t, s, store.EventQuery{Job: "big"})
	requireEvents(t, "all events", all, want, seqsOf(events, func(model.Event) bool { return true }))
	instance := uint32(instances - 1)
	requireEvents(t, "events of the last instance", listEvents(t, s, store.EventQuery{Job: "big", Instance: &instance}), want,
		seqsOf(events, func(e model.Event) bool { return e.Task != nil && e.Task.ID.Instance == instance }))
	mid := all[len(all)/2].Seq
	requireEvents(t, "a page from the middle", listEvents(t, s, store.EventQuery{Job: "big", After: mid, Limit: 100}), want,
		seqsOf(all[len(all)/2+1:len(all)/2+101], func(model.Event) bool { return true }))
}
