package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
	"github.com/peloton-federated/peloton/shard/reservation"
)

// The shell of host reservations (the decisions are package
// reservation's): placement tells it which tasks found no host for lack
// of room, once a second it asks reservation.Plan which hosts to hold for
// the ones that waited long enough, the host index hides the held hosts
// from every other task, and after each placement pass a reserving task
// is tried on its host alone. All of it runs in the pass, under the
// engine's lock, with no store call.

// ReservationConfig tunes host reservations.
type ReservationConfig struct {
	// After is how long a task that fits no host waits before a host is
	// reserved for it; zero means a minute, negative turns reservations
	// off.
	After time.Duration
	// PerPool bounds the hosts held for one pool's tasks; zero means 2.
	PerPool int
}

func (c ReservationConfig) WithDefaults() ReservationConfig {
	if c.After == 0 {
		c.After = time.Minute
	}
	if c.PerPool <= 0 {
		c.PerPool = 2
	}
	return c
}

// replanEvery is how often the reservations are planned again.
const replanEvery = time.Second

// hostReservations is the shell's state: the tasks waiting for room, the
// reservations held and the hosts they hide.
type hostReservations struct {
	Cfg ReservationConfig
	// waiting are the tasks placement found no host for, for lack of
	// room, with the task as placement saw it.
	waiting map[model.TaskID]*waiter
	held    []reservation.Reservation
	byTask  map[model.TaskID]model.HostID
	hidden  map[model.HostID]bool
	planned time.Time
}

type waiter struct {
	Task  placement.Task
	Pool  string
	Since time.Time
}

// Unplaced notes a task placement found no host for; only a task on its
// own (not in a gang) that lacked room is a waiter.
func (r *hostReservations) Unplaced(id model.TaskID, t *placement.Task, pool string, why placement.Explanation, now time.Time) {
	if r.Cfg.After < 0 || t.Gang != 0 || why.Code != placement.Unschedulable || !lackedRoom(why) {
		r.Placed(id)
		return
	}
	if r.waiting == nil {
		r.waiting = map[model.TaskID]*waiter{}
	}
	if w, ok := r.waiting[id]; ok {
		w.Task = *t
		return
	}
	r.waiting[id] = &waiter{Task: *t, Pool: pool, Since: now}
}

// lackedRoom reports whether some host was turned down for lack of room.
func lackedRoom(why placement.Explanation) bool {
	for _, f := range why.Filtered {
		if strings.HasPrefix(f.Reason, "insufficient ") {
			return true
		}
	}
	return false
}

// Placed forgets a task that is no longer waiting.
func (r *hostReservations) Placed(id model.TaskID) {
	delete(r.waiting, id)
}

// hide closes a held host to placement.
func (r *hostReservations) hide(h placement.Host) placement.Host {
	if r.hidden[h.ID] {
		h.Schedulable = false
	}
	return h
}

// reserveHosts plans the reservations again, at most once a second.
func (b *hostReservations) reserveHosts(e *State, now time.Time) {
	r := &e.Reserve
	if r.Cfg.After < 0 || (len(r.waiting) == 0 && len(r.held) == 0) || now.Sub(r.planned) < replanEvery {
		return
	}
	r.planned = now
	in := reservation.Input{Now: now, After: r.Cfg.After, PerPool: r.Cfg.PerPool, Held: r.held}
	views := e.Settings.Hosts.Snapshot()
	// Each host as placement sees it empty, made once for every waiter.
	empty := make([]placement.Host, len(views))
	for i := range views {
		empty[i] = placementHost(&views[i], views[i].Capacity, e.HostPoolOf(views[i].ID), e.Clusters.Drained)
	}
	for id, w := range r.waiting {
		if _, t := e.Task(id); t == nil || t.State != model.TaskReady {
			delete(r.waiting, id)
			continue
		}
		in.Waiters = append(in.Waiters, reservationWaiter(id, w, empty))
	}
	for i := range views {
		v := &views[i]
		in.Hosts = append(in.Hosts, reservation.Host{ID: v.ID, Capacity: v.Capacity, Free: v.Free(),
			Open: v.State == model.HostUp && !e.Clusters.Drained[v.Cluster]})
	}
	d := reservation.Plan(in)
	for _, x := range d.Released {
		e.Index.released[x.Host] = true
		e.Log.Info("host reservation released", "host", x.Host, "task", x.Task, "why", x.Why)
	}
	for _, x := range d.Made {
		e.Index.released[x.Host] = true
		e.Log.Info("host reserved for a task that fits no host", "host", x.Host, "task", x.Task, "pool", x.Pool,
			"waited", now.Sub(r.waiting[x.Task].Since).Round(time.Second))
	}
	r.setHeld(d.Held)
}

// reservationWaiter describes a waiting task to the plan: which hosts it
// may run on at all is placement's word.
func reservationWaiter(id model.TaskID, w *waiter, hosts []placement.Host) reservation.Waiter {
	admits := map[model.HostID]bool{}
	for i := range hosts {
		if placement.Admits(&hosts[i], &w.Task) {
			admits[hosts[i].ID] = true
		}
	}
	return reservation.Waiter{Task: id, Pool: w.Pool, Need: w.Task.Resources, Since: w.Since,
		Admits: func(h model.HostID) bool { return admits[h] }}
}

// setHeld takes the reservations that stand.
func (r *hostReservations) setHeld(held []reservation.Reservation) {
	r.held = held
	r.byTask = make(map[model.TaskID]model.HostID, len(held))
	r.hidden = make(map[model.HostID]bool, len(held))
	for _, x := range held {
		r.byTask[x.Task] = x.Host
		r.hidden[x.Host] = true
	}
}

// release lets a placed task's reservation go.
func (b *hostReservations) releaseReservation(e *State, id model.TaskID) {
	r := &e.Reserve
	h, ok := r.byTask[id]
	if !ok {
		return
	}
	kept := r.held[:0:0]
	for _, x := range r.held {
		if x.Task != id {
			kept = append(kept, x)
		}
	}
	r.setHeld(kept)
	e.Index.released[h] = true
}

// placeOnReserved tries each task placement left unplaced that holds a
// reservation on its host alone, and returns the tasks still unplaced.
func (b *hostReservations) placeOnReserved(e *State, still []model.TaskID, now time.Time) []model.TaskID {
	r := &e.Reserve
	if len(r.byTask) == 0 {
		return still
	}
	out := still[:0]
	for _, id := range still {
		host, ok := r.byTask[id]
		w := r.waiting[id]
		if !ok || w == nil {
			out = append(out, id)
			continue
		}
		if b.placeOnHost(e, id, w, host, now) {
			r.Placed(id)
			b.releaseReservation(e, id)
			e.Log.Info("task placed on its reserved host", "task", id, "host", host, "waited", now.Sub(w.Since).Round(time.Second))
			continue
		}
		out = append(out, id)
	}
	return out
}

// placeOnHost places a task on one host if it fits there now; otherwise
// its message says what the host has yet to free.
func (b *hostReservations) placeOnHost(e *State, id model.TaskID, w *waiter, host model.HostID, now time.Time) bool {
	v, ok := e.Settings.Hosts.View(host)
	if !ok {
		return false
	}
	h := placementHost(&v, v.Free(), e.HostPoolOf(host), e.Clusters.Drained)
	h.Instances = e.Index.counts.onHost(host)
	index, err := placement.NewHostIndex([]placement.Host{h})
	if err == nil {
		task := w.Task
		task.Ref = 0
		res := placement.Place(index, []placement.Task{task}, placement.Options{Seed: e.passes})
		if len(res.Assignments) == 1 && e.Index.assign(e, id, host, now) {
			return true
		}
	}
	je, t := e.Task(id)
	msg := fmt.Sprintf("not placed: waiting for reserved host %s (%s to free)", host, shortageText(reservation.Shortage(w.Task.Resources, v.Free())))
	if t.Message != msg {
		t.Message, t.UpdateTime = msg, now
		e.markDirty(je, t)
	}
	return false
}

// shortageText names what is short: "3 cpu, 512 MiB mem".
func shortageText(r model.Resources) string {
	var parts []string
	if r.MilliCPU > 0 {
		parts = append(parts, strconv.FormatFloat(r.Cores(), 'f', -1, 64)+" cpu")
	}
	if r.MemMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MiB mem", r.MemMB))
	}
	if r.DiskMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MiB disk", r.DiskMB))
	}
	if r.GPU > 0 {
		parts = append(parts, fmt.Sprintf("%d gpu", r.GPU))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
