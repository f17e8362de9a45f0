package periodic

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// maxCatchUp bounds how many missed ticks Decide walks over to find the
// latest one due; beyond it the ticks in between are counted as one
// stretch (a job whose region was down for a week on a per-minute
// schedule).
const maxCatchUp = 100_000

// Run is a run of a periodic job as Decide sees it.
type Run struct {
	ID model.JobID
	// Tick is the tick that launched it; zero for a run launched by hand.
	Tick time.Time
	// Active: not finished.
	Active bool
	// Created orders the finished runs: the oldest are deleted first.
	Created time.Time
}

// Input is one periodic job at one moment.
type Input struct {
	Now      time.Time
	Schedule model.Schedule
	Cron     *Cron
	Location *time.Location
	// Status is the job's recorded schedule state; Created is when the
	// job was created (its first tick is the first after it).
	Status  model.PeriodicStatus
	Created time.Time
	// Stopped: the job was stopped; it launches nothing more and its
	// active runs stop.
	Stopped bool
	Runs    []Run
}

// Decision is what the job does now.
type Decision struct {
	// Launch is the tick whose run to launch now; zero: none.
	Launch time.Time
	// Stop are the active runs to stop before launching (Replace), or
	// because the job was stopped.
	Stop []model.JobID
	// Delete are the finished runs beyond the ones kept, oldest first.
	Delete []model.JobID
	// Status is the job's state once the decision is carried out (with
	// Launch recorded: the caller records it only once the run is
	// stored); Record says whether it differs from the input's.
	Status model.PeriodicStatus
	Record bool
	// Next is the next tick after the ones handled; zero while suspended
	// or stopped, or when the schedule has no more ticks.
	Next time.Time
}

// Decide returns what a periodic job does now.
func Decide(in Input) Decision {
	d := Decision{Status: in.Status, Delete: beyondKept(in.Runs, in.Schedule.Keep())}
	if in.Stopped {
		d.Stop = active(in.Runs)
		return d
	}
	if in.Status.Suspended {
		return d
	}
	from := in.Status.LastTick
	if from.IsZero() || from.Before(in.Created) {
		from = in.Created
	}
	due, passed := latestDue(in.Cron, in.Location, from, in.Now)
	if due.IsZero() {
		d.Next = in.Cron.Next(from, in.Location)
		return d
	}
	d.Record = true
	d.Status.LastTick = due
	d.Next = in.Cron.Next(due, in.Location)
	if dl := in.Schedule.StartingDeadline; dl > 0 && in.Now.Sub(due) > dl {
		d.Status.Missed += passed + 1
		return d
	}
	d.Status.Missed += passed
	running := active(in.Runs)
	switch {
	case len(running) > 0 && in.Schedule.Concurrency == model.ConcurrencyForbid:
		d.Status.Skipped++
		return d
	case in.Schedule.Concurrency == model.ConcurrencyReplace:
		d.Stop = running
	}
	d.Launch = due
	d.Status.Launched++
	return d
}

// latestDue returns the latest tick after from and at or before now, and
// how many ticks it passed over on the way; zero when none is due.
func latestDue(c *Cron, loc *time.Location, from, now time.Time) (time.Time, uint64) {
	var due time.Time
	var passed uint64
	t := from
	for range maxCatchUp {
		next := c.Next(t, loc)
		if next.IsZero() || next.After(now) {
			return due, passed
		}
		if !due.IsZero() {
			passed++
		}
		due, t = next, next
	}
	// Too many to walk: the rest count as one stretch passed over, and
	// the latest tick at or before now is due.
	if last := c.Prev(now, loc); last.After(due) {
		return last, passed + 1
	}
	return due, passed
}

// active returns the runs not finished.
func active(runs []Run) []model.JobID {
	var out []model.JobID
	for _, r := range runs {
		if r.Active {
			out = append(out, r.ID)
		}
	}
	return out
}

// beyondKept returns the finished runs beyond the keep newest, oldest
// first.
func beyondKept(runs []Run, keep int) []model.JobID {
	var done []Run
	for _, r := range runs {
		if !r.Active {
			done = append(done, r)
		}
	}
	if len(done) <= keep {
		return nil
	}
	slices.SortFunc(done, func(a, b Run) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return compareIDs(a.ID, b.ID)
	})
	out := make([]model.JobID, 0, len(done)-keep)
	for _, r := range done[:len(done)-keep] {
		out = append(out, r.ID)
	}
	return out
}

func compareIDs(a, b model.JobID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// RunID is the id of the run a periodic job launches for a tick: the same
// for every attempt to launch it, in the form of a UUID of version 8 (RFC
// 9562) derived by SHA-256 from the job's id and the tick.
func RunID(job model.JobID, tick time.Time) model.JobID {
	h := sha256.New()
	var n [8]byte
	h.Write([]byte("peloton periodic run\x00"))
	binary.BigEndian.PutUint64(n[:], uint64(len(job)))
	h.Write(n[:])
	h.Write([]byte(job))
	binary.BigEndian.PutUint64(n[:], uint64(tick.Unix()))
	h.Write(n[:])
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	sum[6] = sum[6]&0x0f | 0x80
	sum[8] = sum[8]&0x3f | 0x80
	return model.JobID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]))
}
