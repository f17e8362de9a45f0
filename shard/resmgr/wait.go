package resmgr

import (
	"strconv"

	"github.com/peloton-federated/peloton/shard/model"
)

// WaitCode says why a gang that is not admitted waits.
type WaitCode uint8

// Why a gang waits. The pass that last ran decides; Why reads its record.
const (
	// WaitNextPass: queued since the last pass, or what stopped it then is
	// gone; the next pass decides.
	WaitNextPass WaitCode = iota
	// WaitReservation: non-preemptible work of the pool holds its whole
	// reservation (in Resource).
	WaitReservation
	// WaitEntitlement: the pool's work holds its whole entitlement.
	WaitEntitlement
	// WaitLimit: the pool's work holds all that the limit of Pool (the pool
	// or an ancestor) lets it have.
	WaitLimit
	// WaitCapacity: the cluster's admitted work holds its whole capacity.
	WaitCapacity
	// WaitSlackEntitlement: revocable work of the pool holds its whole share
	// of the slack.
	WaitSlackEntitlement
	// WaitSlack: revocable work holds the cluster's whole slack.
	WaitSlack
	// WaitPreemption: gangs of the pool are being preempted and it fits
	// once they end (lower-priority ones may have been preempted for it).
	WaitPreemption
	// WaitMaxRunning: its job has maxRunning members admitted.
	WaitMaxRunning
	// WaitTooLarge: the gang asks for more than the whole cluster (or
	// slack) has.
	WaitTooLarge
	// WaitNeverFits: the gang asks for more than the pool's reservation
	// (non-preemptible work) or the limit of Pool allows: parked until the
	// pools change.
	WaitNeverFits
)

// Wait is why a gang is not admitted, as data: which figure of which pool
// binds, in which resource, and how much of it is held. Amounts are in the
// resource's unit (millicores, MiB, GPUs).
type Wait struct {
	Code WaitCode
	// Pool is the pool whose figure binds; empty for the cluster.
	Pool string
	// Resource indexes model.ResourceKinds.
	Resource int
	// Held is what is held of Bound (for WaitMaxRunning: members admitted
	// and the job's maxRunning); Need what the gang asks for.
	Held, Bound, Need int64
	// Behind: the gang waits in its pool's queue behind one of the same
	// kind that is stopped for this reason (admission is in order, so
	// smaller gangs do not starve a big one).
	Behind bool
	// Preempting is how many gangs are being preempted (WaitPreemption).
	Preempting int
}

// Reason renders the wait without what differs from gang to gang, so that
// the tasks of a job can be summed up by it: "waiting for pool /a's
// entitlement (cpu 10/10)".
func (w Wait) Reason() string {
	amounts := " (" + model.ResourceKinds[w.Resource] + " " + amount(w.Resource, w.Held) + "/" + amount(w.Resource, w.Bound) + unit(w.Resource) + ")"
	switch w.Code {
	case WaitReservation:
		return "waiting for pool " + w.Pool + "'s reservation" + amounts
	case WaitEntitlement:
		return "waiting for pool " + w.Pool + "'s entitlement" + amounts
	case WaitLimit:
		return "waiting for pool " + w.Pool + "'s limit" + amounts
	case WaitCapacity:
		return "waiting for cluster capacity" + amounts
	case WaitSlackEntitlement:
		return "waiting for pool " + w.Pool + "'s share of the slack" + amounts
	case WaitSlack:
		return "waiting for slack" + amounts
	case WaitPreemption:
		return "waiting for " + strconv.Itoa(w.Preempting) + " preempted gangs of pool " + w.Pool + " to end"
	case WaitMaxRunning:
		return "waiting for its job's maxRunning (" + strconv.FormatInt(w.Held, 10) + "/" + strconv.FormatInt(w.Bound, 10) + " admitted)"
	case WaitTooLarge:
		return "larger than the whole cluster (" + model.ResourceKinds[w.Resource] + ": needs " + amount(w.Resource, w.Need) + ", has " + amount(w.Resource, w.Bound) + unit(w.Resource) + ")"
	case WaitNeverFits:
		what := "limit"
		if w.Held < 0 {
			what = "reservation"
		}
		return "can never fit pool " + w.Pool + "'s " + what + " (" + model.ResourceKinds[w.Resource] + ": needs " + amount(w.Resource, w.Need) + ", has " + amount(w.Resource, w.Bound) + unit(w.Resource) + ")"
	}
	return "waiting for the next admission pass"
}

// String is Reason with what the gang asks for and whether it waits
// behind another gang.
func (w Wait) String() string {
	s := w.Reason()
	switch w.Code {
	case WaitReservation, WaitEntitlement, WaitLimit, WaitCapacity, WaitSlackEntitlement, WaitSlack:
		s += ", needs " + amount(w.Resource, w.Need) + unit(w.Resource)
	}
	if w.Behind {
		s += ", behind a gang that waits for it"
	}
	return s
}

func amount(i int, v int64) string { return model.FormatAmount(i, v) }

func unit(i int) string {
	if i == 1 || i == 2 {
		return " MiB"
	}
	return ""
}

// waitAt is what stopped one kind of a leaf's admission in the last pass.
type waitAt struct {
	e   *entry
	why Wait
}

// short returns the first resource in which held plus size passes bound.
func short(held, size, bound model.Resources) (int, bool) {
	for k := range model.ResourceKinds {
		if held.Get(k)+size.Get(k) > bound.Get(k) {
			return k, true
		}
	}
	return 0, false
}

// whyNot explains why fits refused e (see fits).
func (s *Scheduler) whyNot(l *leaf, e *entry, ent, slackEnt, capacity, slack model.Resources) Wait {
	w := func(code WaitCode, pool string, held, bound model.Resources) (Wait, bool) {
		k, ok := short(held, e.size(), bound)
		return Wait{Code: code, Pool: pool, Resource: k, Held: held.Get(k), Bound: bound.Get(k), Need: e.size().Get(k)}, ok
	}
	if e.kind == Revocable {
		if r, ok := w(WaitSlackEntitlement, l.path, l.alloc[Revocable], slackEnt); ok {
			return r
		}
		r, _ := w(WaitSlack, "", s.alloc[Revocable], slack)
		return r
	}
	if e.kind == NonPreemptible {
		if r, ok := w(WaitReservation, l.path, l.alloc[NonPreemptible], l.reservation); ok {
			return r
		}
	}
	if r, ok := w(WaitEntitlement, l.path, l.alloc[NonPreemptible].Add(l.alloc[Preemptible]), ent); ok {
		if limit := l.limitBound.Get(r.Resource); r.Bound >= limit {
			r.Code, r.Pool = WaitLimit, s.limitPool(l.index, r.Resource, limit)
		}
		return r
	}
	r, _ := w(WaitCapacity, "", s.alloc[NonPreemptible].Add(s.alloc[Preemptible]), capacity)
	return r
}

// limitPool is the pool on the way from pool i to the root whose limit of
// resource k is limit, the nearest first.
func (s *Scheduler) limitPool(i, k int, limit int64) string {
	for p := i; p >= 0; p = s.tree.Parent(p) {
		if s.tree.Spec(p).Limit.Get(k) == limit {
			return s.tree.Path(p)
		}
	}
	return s.tree.Path(i)
}

// Why tells why a gang is not admitted, as of the last pass. It reports
// false for a gang that is admitted or unknown.
func (s *Scheduler) Why(id GangID) (Wait, bool) {
	e := s.gangs.get(id)
	if e == nil {
		return Wait{}, false
	}
	switch e.state {
	case Parked:
		return s.whyParked(e), true
	case Queued:
		return s.whyQueued(e), true
	}
	return Wait{}, false
}

// whyParked says which bound a parked gang can never fit in: its pool's
// reservation (for non-preemptible work) or the tightest limit above it.
func (s *Scheduler) whyParked(e *entry) Wait {
	l := e.leaf
	bound, held := l.limitBound, int64(0)
	if e.kind == NonPreemptible && !e.size().Fits(l.reservation) {
		bound, held = l.reservation, -1
	}
	k, _ := short(model.Resources{}, e.size(), bound)
	pool := l.path
	if held == 0 {
		pool = s.limitPool(l.index, k, bound.Get(k))
	}
	return Wait{Code: WaitNeverFits, Pool: pool, Resource: k, Held: held, Bound: bound.Get(k), Need: e.size().Get(k)}
}

// whyQueued says why a queued gang was not admitted: its job's limit, a
// pass not yet run since it came, a size beyond the whole, or what the
// last pass found at the head of its pool's queue of its kind (behind
// which it waits).
func (s *Scheduler) whyQueued(e *entry) Wait {
	if j := s.jobs[e.id.Job]; j != nil && s.jobFull(e) {
		return Wait{Code: WaitMaxRunning, Held: int64(j.admitted), Bound: int64(j.limit)}
	}
	if e.seq > s.passSeq {
		return Wait{Code: WaitNextPass}
	}
	bound := s.passCapacity
	if e.kind == Revocable {
		bound = s.passSlack
	}
	if k, too := short(model.Resources{}, e.size(), bound); too {
		return Wait{Code: WaitTooLarge, Resource: k, Bound: bound.Get(k), Need: e.size().Get(k)}
	}
	at := e.leaf.waits[e.kind]
	if at.e == nil || s.gangs.get(at.e.id) != at.e || at.e.state != Queued {
		return Wait{Code: WaitNextPass}
	}
	w := at.why
	if at.e != e {
		w.Behind = true
		w.Need = e.size().Get(w.Resource)
	}
	return w
}

// Position is a queued gang's place in its pool's queue of its kind,
// counting from 1: the gangs of a higher priority, then those of its own
// queued before it. 0 when it is not queued. It takes time in proportion to
// the gangs ahead.
func (s *Scheduler) Position(id GangID) int {
	e := s.gangs.get(id)
	if e == nil || e.state != Queued || e.level == nil {
		return 0
	}
	n := 1
	for _, lv := range e.leaf.pending[e.kind].levels {
		if lv == e.level {
			break
		}
		n += lv.live
	}
	for i := e.level.head; i < int(e.slot); i++ {
		if e.level.items[i] != nil {
			n++
		}
	}
	return n
}
