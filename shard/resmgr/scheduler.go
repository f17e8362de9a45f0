package resmgr

import (
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// GangState is where a gang is in the scheduler.
type GangState uint8

// States of a gang.
const (
	// Queued: waiting for admission.
	Queued GangState = iota
	// Parked: queued, but it can never fit its pool (a non-preemptible gang
	// larger than the reservation, or any gang above the pool's or an
	// ancestor's limit). It does not count as demand and blocks nothing; a
	// tree change may make it fit.
	Parked
	// Admitted: holds its allocation until removed.
	Admitted
	// Preempting: chosen for preemption, still holding its allocation until
	// the shell reports the kill done with Remove.
	Preempting
)

var stateNames = [...]string{"queued", "parked", "admitted", "preempting"}

func (s GangState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// entry is a gang and the scheduler's bookkeeping for it. There is one per
// queued task of a batch job, so it is kept small: the gang's pool is its
// leaf's, its size is computed from the size of a task, and a gang of one
// task of its own job (nearly all of them) keeps that task's instance and
// run in place of a list.
type entry struct {
	id       GangID
	perTask  model.Resources
	priority int32
	kind     Kind
	state    GangState
	flags    uint8 // gangPreemptible, gangRevocable: as enqueued
	live     int32 // members not finished
	slot     int32 // index in level.items while queued
	// instance and run are the one member of a gang whose more is nil.
	instance, run uint32
	more          *members
	seq           uint64 // enqueue order: FIFO within a priority
	started       uint64 // admission or start order: "most recently started"
	leaf          *leaf
	level         *pendingLevel // while queued
}

// members are the members of a gang of several tasks (or of one task of
// another job than the gang's).
type members struct {
	list []Member
	done []bool // by member; nil until one finishes
}

// Flags of an entry.
const (
	gangPreemptible uint8 = 1 << iota
	gangRevocable
)

// size is what the gang's members not finished hold or ask for.
func (e *entry) size() model.Resources {
	if e.live == 1 {
		return e.perTask
	}
	return e.perTask.Scale(int64(e.live))
}

// memberCount is the gang's size in tasks, finished members included.
func (e *entry) memberCount() int {
	if e.more == nil {
		return 1
	}
	return len(e.more.list)
}

// member returns the i-th member.
func (e *entry) member(i int) Member {
	if e.more == nil {
		return Member{Task: model.TaskID{Job: e.id.Job, Instance: e.instance}, Run: e.run}
	}
	return e.more.list[i]
}

// gang returns the gang as enqueued.
func (e *entry) gang() Gang {
	g := Gang{ID: e.id, Pool: e.leaf.path, Priority: e.priority, Preemptible: e.flags&gangPreemptible != 0,
		Revocable: e.flags&gangRevocable != 0, PerTask: e.perTask, Members: make([]Member, e.memberCount())}
	for i := range g.Members {
		g.Members[i] = e.member(i)
	}
	return g
}

// leaf is a leaf pool's queues, admitted work and running sums.
type leaf struct {
	path        string
	index       int             // pool number in the tree
	ord         int             // number in Scheduler.leaves; -1 once its pool is gone
	reservation model.Resources // non-preemptible work stays within it
	limitBound  model.Resources // the lowest limit on the way to the root
	pending     [kindCount]pendingQueue
	parked      map[GangID]*entry
	admitted    map[GangID]*entry // admitted and preempting
	queued      [kindCount]model.Resources
	alloc       [kindCount]model.Resources // admitted and preempting
	releasing   [kindCount]model.Resources // preempting only
	preempting  int
	overPasses  int
	// preemptibleAt counts admitted preemptible gangs by priority, so that
	// a blocked gang finds out cheaply whether anything is below it.
	preemptibleAt map[int32]int
	// waits records, per kind, the gang at which the last pass stopped
	// admitting and why (see Why).
	waits [kindCount]waitAt
	// parkedSize sums the sizes of its non-revocable parked gangs.
	parkedSize model.Resources
	// want has bit k set when its entitlement is above its allocation in
	// resource k, as last counted in Scheduler.wantCount.
	want uint8
	// sums is its part of the figures, as last added to them.
	sums leafSums
}

// jobCount tracks a job's admitted members against its maxRunning.
type jobCount struct {
	limit    uint32 // 0: none
	admitted uint32
	// watchers are the leaves whose last admission looked at a gang of
	// the job against its limit: they are visited again when admitted
	// changes.
	watchers []*leaf
}

// Scheduler is the resource manager's scheduling core for one shard: per
// leaf pool, pending queues of gangs and the admitted work; each Pass
// computes entitlements, preempts and admits. It is a deterministic state
// machine: no goroutines, clock, I/O or logging. It is not safe for
// concurrent use.
type Scheduler struct {
	cfg         Config
	tree        *entitlement.Tree
	solver      *entitlement.Solver
	slackSolver *entitlement.Solver
	leaves      []*leaf // in pool-number order
	byPath      map[string]*leaf
	gangs       gangIndex
	jobs        map[model.JobID]*jobCount
	seq         uint64
	alloc       [kindCount]model.Resources // sums over leaves
	releasing   [kindCount]model.Resources
	demand      []model.Resources // by pool number, reused by every pass
	slackDemand []model.Resources
	figures     []PoolFigures // by pool number, from the last pass
	leafAt      []*leaf       // by pool number; nil for a parent
	// What changed since the last pass (see incremental.go): rebuild
	// makes the next pass start from scratch; touched leaves had their
	// queues or allocation change; visit holds the leaves the next pass's
	// admission looks at; over the leaves held above their entitlement or
	// counting passes over it; revocable the leaves holding revocable
	// work. wantCount counts, per resource, the leaves whose entitlement
	// is above their allocation.
	rebuild                         bool
	touched, visit, over, revocable leafSet
	wantCount                       [len(model.ResourceKinds)]int
	work                            []int32 // scratch: the touched leaves of a pass
	// passSeq is the sequence number when the last pass started (gangs
	// queued later were not considered); passCapacity and passSlack its
	// input.
	passSeq                 uint64
	passCapacity, passSlack model.Resources
}

// New returns a scheduler over the pool tree (nil: no pools yet).
func New(tree *entitlement.Tree, cfg Config) *Scheduler {
	s := &Scheduler{
		cfg:    cfg,
		byPath: map[string]*leaf{},
		gangs:  gangIndex{jobs: map[model.JobID]*jobGangs{}},
		jobs:   map[model.JobID]*jobCount{},
	}
	s.SetTree(tree)
	return s
}

// Tree returns the pool tree in use.
func (s *Scheduler) Tree() *entitlement.Tree { return s.tree }

// SetTree replaces the pool tree. Queued and admitted work stays with the
// leaf pool of the same path; gangs whose pool is gone or now has children
// are forgotten and returned, in enqueue order, so the shell can fail them.
// Hysteresis counters of pools that stay are kept.
func (s *Scheduler) SetTree(tree *entitlement.Tree) []Gang {
	if tree == nil {
		tree, _ = entitlement.NewTree(nil)
	}
	s.tree = tree
	s.solver = entitlement.NewSolver(tree)
	s.slackSolver = entitlement.NewSolver(tree)
	n := tree.Len()
	s.demand = make([]model.Resources, n)
	s.slackDemand = make([]model.Resources, n)
	s.figures = make([]PoolFigures, n)
	for i := range n {
		s.figures[i] = s.configFigures(i)
	}
	s.leafAt = make([]*leaf, n)
	s.rebuild = true
	s.touched, s.visit, s.over, s.revocable = newLeafSet(n), newLeafSet(n), newLeafSet(n), newLeafSet(n)

	old := s.byPath
	for _, l := range old {
		l.ord = -1 // until found in the new tree
	}
	s.byPath = make(map[string]*leaf, n)
	s.leaves = s.leaves[:0]
	for i := range n {
		if !tree.IsLeaf(i) {
			continue
		}
		path := tree.Path(i)
		l := old[path]
		if l == nil {
			l = &leaf{path: path, parked: map[GangID]*entry{}, admitted: map[GangID]*entry{}, preemptibleAt: map[int32]int{}}
		}
		delete(old, path)
		l.index, l.ord = i, len(s.leaves)
		s.leafAt[i] = l
		s.markRevocable(l)
		l.reservation = tree.Spec(i).Reservation
		l.limitBound = limitBound(tree, i)
		s.byPath[path] = l
		s.leaves = append(s.leaves, l)
		s.requeue(l)
	}
	var orphans []*entry
	for _, l := range old {
		for _, e := range l.all() {
			orphans = append(orphans, e)
		}
	}
	slices.SortFunc(orphans, func(a, b *entry) int { return cmpUint(a.seq, b.seq) })
	gone := make([]Gang, 0, len(orphans))
	for _, e := range orphans {
		s.forget(e)
		gone = append(gone, e.gang())
	}
	return gone
}

// limitBound is the lowest limit of pool i and its ancestors, per resource.
func limitBound(tree *entitlement.Tree, i int) model.Resources {
	b := tree.Spec(i).Limit
	for p := tree.Parent(i); p >= 0; p = tree.Parent(p) {
		b = b.Min(tree.Spec(p).Limit)
	}
	return b
}

// hasPreemptibleBelow reports whether the leaf has admitted preemptible
// gangs (being preempted or not) with a priority below p.
func (l *leaf) hasPreemptibleBelow(p int32) bool {
	for q := range l.preemptibleAt {
		if q < p {
			return true
		}
	}
	return false
}

// all returns every gang of the leaf, queued, parked or admitted.
func (l *leaf) all() []*entry {
	var out []*entry
	for k := range l.pending {
		l.pending[k].each(func(e *entry) bool { out = append(out, e); return true })
	}
	for _, e := range l.parked {
		out = append(out, e)
	}
	for _, e := range l.admitted {
		out = append(out, e)
	}
	return out
}

// requeue sorts a leaf's waiting gangs again into queued and parked after
// its configuration changed, keeping their enqueue order.
func (s *Scheduler) requeue(l *leaf) {
	var waiting []*entry
	for k := range l.pending {
		l.pending[k].each(func(e *entry) bool { waiting = append(waiting, e); return true })
		l.pending[k] = pendingQueue{}
		l.queued[k] = model.Resources{}
	}
	for _, e := range l.parked {
		waiting = append(waiting, e)
	}
	clear(l.parked)
	l.parkedSize = model.Resources{}
	slices.SortFunc(waiting, func(a, b *entry) int { return cmpUint(a.seq, b.seq) })
	for _, e := range waiting {
		e.level = nil
		s.wait(l, e)
	}
}

// wait puts a gang that is not admitted into its queue, or parks it.
func (s *Scheduler) wait(l *leaf, e *entry) {
	s.touch(l)
	if l.canNeverFit(e) {
		e.state = Parked
		l.parked[e.id] = e
		if e.kind != Revocable {
			l.parkedSize = l.parkedSize.Add(e.size())
		}
		return
	}
	e.state = Queued
	l.pending[e.kind].push(e)
	l.queued[e.kind] = l.queued[e.kind].Add(e.size())
}

// canNeverFit reports whether no amount of waiting admits the gang as the
// pool is configured: non-preemptible work beyond the reservation, or any
// work beyond the lowest limit above it.
func (l *leaf) canNeverFit(e *entry) bool {
	if e.kind == NonPreemptible {
		return !e.size().Fits(l.reservation)
	}
	return !e.size().Fits(l.limitBound)
}

// newEntry validates a gang and finds its leaf pool.
func (s *Scheduler) newEntry(g Gang) (*entry, *leaf, error) {
	switch {
	case len(g.Members) == 0:
		return nil, nil, fmt.Errorf("gang %s: %w", g.ID, ErrEmptyGang)
	case g.PerTask.Invalid() >= 0:
		return nil, nil, fmt.Errorf("gang %s: per-task %v: %w", g.ID, g.PerTask, ErrBadResources)
	}
	if s.gangs.get(g.ID) != nil {
		return nil, nil, fmt.Errorf("gang %s: %w", g.ID, ErrDuplicateGang)
	}
	l := s.byPath[g.Pool]
	if l == nil {
		if _, ok := s.tree.Index(g.Pool); ok {
			return nil, nil, fmt.Errorf("gang %s: pool %q: %w", g.ID, g.Pool, ErrNotLeafPool)
		}
		return nil, nil, fmt.Errorf("gang %s: pool %q: %w", g.ID, g.Pool, ErrUnknownPool)
	}
	e := &entry{id: g.ID, perTask: g.PerTask, priority: g.Priority, kind: KindOf(&g), live: int32(len(g.Members)), seq: s.next(), leaf: l}
	if g.Preemptible {
		e.flags |= gangPreemptible
	}
	if g.Revocable {
		e.flags |= gangRevocable
	}
	if m := g.Members[0]; len(g.Members) == 1 && m.Task.Job == g.ID.Job {
		e.instance, e.run = m.Task.Instance, m.Run
	} else {
		e.more = &members{list: slices.Clone(g.Members)}
	}
	return e, l, nil
}

// Enqueue queues a gang for admission behind the gangs of its priority and
// kind already queued in its pool.
func (s *Scheduler) Enqueue(g Gang) error {
	e, l, err := s.newEntry(g)
	if err != nil {
		return err
	}
	s.gangs.put(e)
	s.wait(l, e)
	return nil
}

// Adopt records a gang that already holds resources (work found running
// after a restart) as admitted, without admission checks.
func (s *Scheduler) Adopt(g Gang) error {
	e, l, err := s.newEntry(g)
	if err != nil {
		return err
	}
	s.gangs.put(e)
	s.hold(l, e)
	return nil
}

// hold makes a gang admitted and counts its allocation.
func (s *Scheduler) hold(l *leaf, e *entry) {
	e.state = Admitted
	e.started = s.next()
	l.admitted[e.id] = e
	if e.kind == Preemptible {
		l.preemptibleAt[e.priority]++
	}
	size := e.size()
	l.alloc[e.kind] = l.alloc[e.kind].Add(size)
	s.alloc[e.kind] = s.alloc[e.kind].Add(size)
	j := s.job(e.id.Job)
	j.admitted += uint32(e.live)
	s.touch(l)
	s.markRevocable(l)
	s.wake(j)
}

func (s *Scheduler) job(id model.JobID) *jobCount {
	j := s.jobs[id]
	if j == nil {
		j = &jobCount{}
		s.jobs[id] = j
	}
	return j
}

// SetJobLimit caps how many members of a job's gangs may be admitted at
// once (the job's maxRunning; 0 lifts the cap). A gang that would pass the
// cap stays queued without blocking the gangs behind it.
func (s *Scheduler) SetJobLimit(job model.JobID, maxRunning uint32) {
	j := s.job(job)
	if j.limit != maxRunning {
		s.wake(j)
		s.gangs.each(job, func(e *entry) {
			if e.state == Queued {
				s.touch(e.leaf)
			}
		})
	}
	j.limit = maxRunning
	s.dropJobIfIdle(job, j)
}

func (s *Scheduler) dropJobIfIdle(id model.JobID, j *jobCount) {
	if j.limit == 0 && j.admitted == 0 {
		delete(s.jobs, id)
	}
}

// jobFull reports whether admitting e would pass its job's cap.
func (s *Scheduler) jobFull(e *entry) bool {
	j := s.jobs[e.id.Job]
	return j != nil && j.limit > 0 && uint64(j.admitted)+uint64(e.live) > uint64(j.limit)
}

// Remove forgets a gang whatever its state: a queued gang leaves its queue;
// an admitted or preempting one releases its allocation. The shell calls it
// when a queued gang is killed, and when the last member of an admitted gang
// has ended or been killed (a preempted gang's kill is done). It reports
// whether the gang was known.
func (s *Scheduler) Remove(id GangID) bool {
	e := s.gangs.get(id)
	if e == nil {
		return false
	}
	s.forget(e)
	e.leaf.pending[e.kind].tidy()
	return true
}

// Finished releases one member of an admitted gang whose task ended on its
// own (a batch gang whose members finish at different times); the gang is
// forgotten once every member has. It reports whether the member was
// admitted and not already finished.
func (s *Scheduler) Finished(id GangID, task model.TaskID) bool {
	e := s.gangs.get(id)
	if e == nil || (e.state != Admitted && e.state != Preempting) {
		return false
	}
	if e.more == nil {
		if e.member(0).Task != task {
			return false
		}
		s.forget(e)
		return true
	}
	m := -1
	for i, mem := range e.more.list {
		if mem.Task == task && (e.more.done == nil || !e.more.done[i]) {
			m = i
			break
		}
	}
	if m < 0 {
		return false
	}
	if e.live == 1 {
		s.forget(e)
		return true
	}
	if e.more.done == nil {
		e.more.done = make([]bool, len(e.more.list))
	}
	e.more.done[m] = true
	s.release(e, e.perTask, 1)
	e.live--
	return true
}

// release takes amount (members tasks) of an admitted gang off the sums.
func (s *Scheduler) release(e *entry, amount model.Resources, members int) {
	l, k := e.leaf, e.kind
	l.alloc[k] = l.alloc[k].Sub(amount)
	s.alloc[k] = s.alloc[k].Sub(amount)
	if e.state == Preempting {
		l.releasing[k] = l.releasing[k].Sub(amount)
		s.releasing[k] = s.releasing[k].Sub(amount)
	}
	s.touch(l)
	s.markRevocable(l)
	j := s.jobs[e.id.Job]
	if j != nil {
		j.admitted -= uint32(min(members, int(j.admitted)))
		s.wake(j)
		s.dropJobIfIdle(e.id.Job, j)
	}
}

// forget drops a gang from its queue or its allocation, and from the index.
func (s *Scheduler) forget(e *entry) {
	l := e.leaf
	switch e.state {
	case Queued:
		l.pending[e.kind].take(e)
		l.queued[e.kind] = l.queued[e.kind].Sub(e.size())
		s.touch(l)
	case Parked:
		delete(l.parked, e.id)
		if e.kind != Revocable {
			l.parkedSize = l.parkedSize.Sub(e.size())
		}
		s.touch(l)
	case Admitted, Preempting:
		s.release(e, e.size(), int(e.live))
		if e.state == Preempting {
			l.preempting--
		}
		delete(l.admitted, e.id)
		if e.kind == Preemptible {
			if l.preemptibleAt[e.priority]--; l.preemptibleAt[e.priority] == 0 {
				delete(l.preemptibleAt, e.priority)
			}
		}
	}
	s.gangs.del(e.id)
}

// Started marks an admitted gang as started now: among gangs of one
// priority, the most recently started is preempted first. Admission counts
// as a start until then. It reports whether the gang is admitted.
func (s *Scheduler) Started(id GangID) bool {
	e := s.gangs.get(id)
	if e == nil || (e.state != Admitted && e.state != Preempting) {
		return false
	}
	e.started = s.next()
	return true
}

// Lookup returns a gang as queued (members that finished included) and its
// state.
func (s *Scheduler) Lookup(id GangID) (Gang, GangState, bool) {
	e := s.gangs.get(id)
	if e == nil {
		return Gang{}, 0, false
	}
	return e.gang(), e.state, true
}

// Len returns the number of gangs known: queued, parked and admitted.
func (s *Scheduler) Len() int { return s.gangs.n }

// next returns the next number of the sequence that orders enqueues and
// starts.
func (s *Scheduler) next() uint64 {
	s.seq++
	return s.seq
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
