package reservation

import (
	"cmp"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Waiter is a task placement found no host for, for lack of room.
type Waiter struct {
	Task model.TaskID
	Pool string
	Need model.Resources
	// Since is when it was first found no host for, in this wait.
	Since time.Time
	// Admits says whether the task may run on a host at all (its
	// clusters, host pools and constraints), room aside; nil: any host.
	Admits func(model.HostID) bool
}

// Host is a host as Plan sees it.
type Host struct {
	ID       model.HostID
	Capacity model.Resources
	Free     model.Resources
	// Open: up and taking new work (not draining, not in a drained
	// cluster).
	Open bool
}

// Reservation holds Host for Task, a task of Pool, since Since.
type Reservation struct {
	Task  model.TaskID
	Host  model.HostID
	Pool  string
	Since time.Time
}

// Released is a reservation let go, and why.
type Released struct {
	Reservation
	Why string
}

// Input is what Plan decides from.
type Input struct {
	Now time.Time
	// After is how long a task waits before a host is reserved for it.
	After time.Duration
	// PerPool bounds the hosts held for one pool's tasks.
	PerPool int
	Waiters []Waiter
	Hosts   []Host
	Held    []Reservation
}

// Decision is the reservations after the step.
type Decision struct {
	// Held are the reservations that stand: those kept, then those made.
	Held     []Reservation
	Made     []Reservation
	Released []Released
}

// Plan keeps the reservations that still stand, releases the others and
// reserves hosts for the oldest waiters past After, within PerPool.
func Plan(in Input) Decision {
	waiting := make(map[model.TaskID]*Waiter, len(in.Waiters))
	for i := range in.Waiters {
		waiting[in.Waiters[i].Task] = &in.Waiters[i]
	}
	hosts := make(map[model.HostID]*Host, len(in.Hosts))
	for i := range in.Hosts {
		hosts[in.Hosts[i].ID] = &in.Hosts[i]
	}
	var d Decision
	taken := map[model.HostID]bool{}
	perPool := map[string]int{}
	for _, r := range in.Held {
		if why := broken(r, waiting[r.Task], hosts[r.Host]); why != "" {
			d.Released = append(d.Released, Released{Reservation: r, Why: why})
			continue
		}
		d.Held = append(d.Held, r)
		taken[r.Host] = true
		perPool[r.Pool]++
	}
	holding := map[model.TaskID]bool{}
	for _, r := range d.Held {
		holding[r.Task] = true
	}
	for _, w := range oldestFirst(in.Waiters) {
		if holding[w.Task] || in.Now.Sub(w.Since) < in.After || perPool[w.Pool] >= in.PerPool {
			continue
		}
		h := best(w, in.Hosts, taken)
		if h == nil {
			continue
		}
		r := Reservation{Task: w.Task, Host: h.ID, Pool: w.Pool, Since: in.Now}
		d.Held = append(d.Held, r)
		d.Made = append(d.Made, r)
		taken[h.ID] = true
		perPool[w.Pool]++
	}
	return d
}

// broken says why a held reservation no longer stands, or "".
func broken(r Reservation, w *Waiter, h *Host) string {
	switch {
	case w == nil:
		return "its task was placed or went away"
	case h == nil || !h.Open:
		return "its host went away or closed"
	case !w.Need.Fits(h.Capacity):
		return "its host shrank below the task"
	}
	return ""
}

// oldestFirst orders the waiters by how long they have waited, then by
// task.
func oldestFirst(ws []Waiter) []*Waiter {
	out := make([]*Waiter, len(ws))
	for i := range ws {
		out[i] = &ws[i]
	}
	slices.SortFunc(out, func(a, b *Waiter) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Task.Job, b.Task.Job); c != 0 {
			return c
		}
		return cmp.Compare(a.Task.Instance, b.Task.Instance)
	})
	return out
}

// best is the open host, not held already, that the task may run on and
// could fit on empty, lacking the least of what it needs: the smallest
// largest fraction of a resource still to free, then the least cpu, then
// the host's id.
func best(w *Waiter, hosts []Host, taken map[model.HostID]bool) *Host {
	var out *Host
	var outScore float64
	for i := range hosts {
		h := &hosts[i]
		if !h.Open || taken[h.ID] || !w.Need.Fits(h.Capacity) || (w.Admits != nil && !w.Admits(h.ID)) {
			continue
		}
		score := missing(w.Need, h.Free)
		if out == nil || score < outScore || (score == outScore && better(w.Need, h, out)) {
			out, outScore = h, score
		}
	}
	return out
}

func better(need model.Resources, a, b *Host) bool {
	sa, sb := Shortage(need, a.Free), Shortage(need, b.Free)
	if sa.MilliCPU != sb.MilliCPU {
		return sa.MilliCPU < sb.MilliCPU
	}
	return a.ID < b.ID
}

// missing is the largest fraction of one resource the host lacks for the
// need: 0 when it fits now, 1 when it has none of some resource free.
func missing(need, free model.Resources) float64 {
	s := Shortage(need, free)
	m := 0.0
	for _, p := range [][2]int64{{s.MilliCPU, need.MilliCPU}, {s.MemMB, need.MemMB}, {s.DiskMB, need.DiskMB}, {s.GPU, need.GPU}} {
		if p[1] > 0 {
			m = max(m, float64(p[0])/float64(p[1]))
		}
	}
	return m
}

// Shortage is what a host with free lacks for need, per resource.
func Shortage(need, free model.Resources) model.Resources {
	return need.Sub(free).Max(model.Resources{})
}
