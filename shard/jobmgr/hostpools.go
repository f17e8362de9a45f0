package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"slices"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/hostpool"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// Defaults of HostPoolConfig.
const (
	DefaultHostPoolPeriod        = 10 * time.Second
	DefaultHostPoolDrainDeadline = 10 * time.Minute
)

// maxRecentMoves bounds the host pool moves kept to show.
const maxRecentMoves = 50

// hostPoolShell is the host pool policy's shell (shard/hostpool decides):
// a goroutine that runs the policy over the hosts and each pool's demand
// and moves hosts between pools, the moves it remembers, and the command
// that sets a host's pool by hand.
type hostPoolShell struct{ e *Engine }

// hostPoolBook is what the policy shell remembers between passes.
type hostPoolBook struct {
	mu mutex
	// recent are the latest move events, oldest first.
	recent []model.Event
	// lastMoved is when each host last changed host pools.
	lastMoved map[model.HostID]time.Time
}

// errSkip: a move no longer applies to the host's record (an operator
// acted since the policy looked); nothing is changed.
var errSkip = errors.New("move no longer applies")

// hostPoolPrefix starts the drain reason of a host drained for a move.
const hostPoolPrefix = "moving to host pool "

// loadMoves reads the stored moves, keeping the latest.
func (s *hostPoolShell) loadMoves(ctx context.Context) {
	evs, err := s.e.cfg.Store.ListEvents(ctx, store.EventQuery{Job: model.HostPoolEvents})
	if err != nil {
		s.e.c.Log.Warn("reading host pool moves failed; recent moves start empty", "err", err)
		return
	}
	s.e.hostPools.mu.Lock()
	defer s.e.hostPools.mu.Unlock()
	for _, ev := range evs {
		s.noteMove(ev)
	}
}

// noteMove keeps a move event; hostPools.mu is held.
func (s *hostPoolShell) noteMove(ev model.Event) {
	b := &s.e.hostPools
	if b.lastMoved == nil {
		b.lastMoved = map[model.HostID]time.Time{}
	}
	if ev.HostPoolMove.Phase == model.HostPoolMoveDone {
		b.lastMoved[ev.HostPoolMove.Host] = ev.Time
	}
	b.recent = append(b.recent, ev)
	if over := len(b.recent) - maxRecentMoves; over > 0 {
		b.recent = append(b.recent[:0], b.recent[over:]...)
	}
}

// recordMove emits a move as an event and keeps it as a recent move.
func (s *hostPoolShell) recordMove(m model.HostPoolMove, now time.Time) {
	evs := []core.Event{{Time: now, Job: model.HostPoolEvents, HostPoolMove: &m}}
	s.e.emit(evs) // numbers it
	s.e.hostPools.mu.Lock()
	s.noteMove(evs[0])
	s.e.hostPools.mu.Unlock()
	s.e.c.Log.Info("host pool move", "host", m.Host, "from", m.From, "to", m.To, "phase", m.Phase, "reason", m.Reason)
}

// run runs the policy every period until ctx ends.
func (s *hostPoolShell) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.e.cfg.Clock.After(s.e.cfg.HostPools.Period):
		}
		s.pass(ctx)
	}
}

// pass feeds the policy what the shard sees now and applies its
// moves.
func (s *hostPoolShell) pass(ctx context.Context) {
	now := s.e.cfg.Clock.Now()
	in := hostpool.Input{Demand: s.demand(), Floors: s.e.cfg.HostPools.Floors, MinStay: s.e.cfg.HostPools.Period, Now: now}
	in.Hosts = s.hosts()
	for _, m := range hostpool.Plan(in) {
		if err := s.applyMove(ctx, m, now); err != nil && !errors.Is(err, errSkip) && ctx.Err() == nil {
			s.e.c.Log.Warn("host pool move failed; the next pass tries again", "host", m.Host, "move", m.Kind, "err", err)
		}
	}
}

// hosts describes the reported hosts to the policy.
func (s *hostPoolShell) hosts() []hostpool.Host {
	views := s.e.cfg.Hosts.Snapshot()
	s.e.hostPools.mu.Lock()
	lastMoved := make(map[model.HostID]time.Time, len(s.e.hostPools.lastMoved))
	for id, t := range s.e.hostPools.lastMoved {
		lastMoved[id] = t
	}
	s.e.hostPools.mu.Unlock()
	s.e.hosts.mu.Lock()
	defer s.e.hosts.mu.Unlock()
	out := make([]hostpool.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" {
			continue
		}
		h := hostpool.Host{ID: v.ID, Pool: model.DefaultHostPool, Capacity: v.Capacity, Allocated: v.Allocated,
			Tasks: v.Tasks, LastMoved: lastMoved[v.ID]}
		h.InService = v.State == model.HostUp || v.State == model.HostDraining
		if rec := s.e.hosts.recs[v.ID]; rec != nil {
			h.Pool, h.Target = rec.Pool(), rec.HostPoolTarget
			if rec.Down || (rec.Draining && rec.HostPoolTarget == "") {
				h.InService = false // an operator holds it
			}
		}
		out = append(out, h)
	}
	return out
}

// demand is, per host pool, what tasks of resource pools that
// name it first wait for: tasks admitted that found no host.
func (s *hostPoolShell) demand() map[string]model.Resources {
	s.e.lock()
	defer s.e.mu.Unlock()
	out := map[string]model.Resources{}
	byPool := map[string][]string{}
	for _, id := range s.e.c.Queue.Ready {
		je, t := s.e.c.Task(id)
		if t == nil || t.State != model.TaskReady || t.Message == "" || je.Job.Spec.Revocable {
			continue // not tried yet, or placed on slack
		}
		pools, ok := byPool[je.Job.Spec.Pool]
		if !ok {
			pools = s.e.c.ResourceHostPools(je.Job.Spec.Pool)
			byPool[je.Job.Spec.Pool] = pools
		}
		if len(pools) > 0 {
			out[pools[0]] = out[pools[0]].Add(je.TaskResources(t))
		}
	}
	return out
}

// hostPoolLabel is how a host pool is stored: the default pool as empty.
func hostPoolLabel(name string) string {
	if name == model.DefaultHostPool {
		return ""
	}
	return name
}

// clearDrain ends a drain on a record.
func clearDrain(rec *model.HostRecord) {
	rec.Draining, rec.DrainReason, rec.DrainTime, rec.DrainDeadline = false, "", time.Time{}, time.Time{}
}

// applyMove carries out one decision of the policy.
func (s *hostPoolShell) applyMove(ctx context.Context, m hostpool.Move, now time.Time) error {
	mv := model.HostPoolMove{Host: m.Host, From: m.From, To: m.To, Reason: m.Reason, Phase: model.HostPoolMoveDone}
	var change func(rec *model.HostRecord) error
	switch m.Kind {
	case hostpool.MoveNow:
		change = func(rec *model.HostRecord) error {
			if rec.Pool() != m.From || rec.HostPoolTarget != "" || rec.Draining {
				return errSkip
			}
			rec.HostPool = hostPoolLabel(m.To)
			return nil
		}
	case hostpool.MoveDrain:
		mv.Phase = model.HostPoolMoveDraining
		change = func(rec *model.HostRecord) error {
			if rec.Pool() != m.From || rec.HostPoolTarget != "" || rec.Draining {
				return errSkip
			}
			rec.Draining, rec.DrainReason, rec.DrainTime = true, hostPoolPrefix+m.To, now
			rec.DrainDeadline = now.Add(s.e.cfg.HostPools.DrainDeadline)
			rec.HostPoolTarget = m.To
			return nil
		}
	case hostpool.MoveFinish:
		change = func(rec *model.HostRecord) error {
			if rec.HostPoolTarget != m.To {
				return errSkip
			}
			mv.Waited = now.Sub(rec.DrainTime)
			rec.HostPool, rec.HostPoolTarget = hostPoolLabel(m.To), ""
			clearDrain(rec)
			return nil
		}
	case hostpool.MoveCancel:
		mv.Phase = model.HostPoolMoveCancelled
		change = func(rec *model.HostRecord) error {
			if rec.HostPoolTarget != m.To {
				return errSkip
			}
			rec.HostPoolTarget = ""
			clearDrain(rec)
			return nil
		}
	default:
		return fmt.Errorf("unknown move %v: %w", m.Kind, core.ErrInvalid)
	}
	if _, _, err := s.e.hostRun.change(ctx, m.Host, change); err != nil {
		return err
	}
	s.recordMove(mv, now)
	return nil
}

// setHostPool puts a host in a host pool at once. A move of the policy
// under way for the host is called off (its drain ends).
func (s *hostPoolShell) setHostPool(ctx context.Context, id model.HostID, pool string) (*model.HostRecord, error) {
	if !model.ValidHostPoolName(pool) {
		return nil, fmt.Errorf("host pool %q: want 1 to %d lowercase letters, digits and -, starting with a letter: %w",
			pool, model.MaxHostPoolName, core.ErrInvalid)
	}
	now := s.e.cfg.Clock.Now()
	var from string
	rec, _, err := s.e.hostRun.change(ctx, id, func(rec *model.HostRecord) error {
		from = rec.Pool()
		if rec.HostPoolTarget != "" {
			rec.HostPoolTarget = ""
			clearDrain(rec)
		}
		rec.HostPool = hostPoolLabel(pool)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if from != pool {
		s.recordMove(model.HostPoolMove{Host: id, From: from, To: pool, Phase: model.HostPoolMoveDone, Reason: "set by an operator"}, now)
	}
	return rec, nil
}

// HostPoolView is one host pool as `peloton host pool list` shows it.
type HostPoolView struct {
	Name string
	// Hosts are the hosts in the host pool, ordered by id; InService
	// counts those up and not held by an operator.
	Hosts     []model.HostID
	InService int
	Floor     int
	// Capacity and Allocated are those of the hosts in service; Demand is
	// what waits for a host of the host pool.
	Capacity, Allocated, Demand model.Resources
	// Moving are hosts being drained to move to another host pool.
	Moving []model.HostID
}

// HostPoolReport is every host pool and the latest moves.
type HostPoolReport struct {
	Pools []HostPoolView
	// Recent are the latest moves, newest first.
	Recent []model.Event
	// Period is how often the policy runs (0: it is off).
	Period time.Duration
}

// HostPools reports the host pools: those hosts are in, those resource
// pools name or have a floor, and the default one.
func (r Reads) HostPools() HostPoolReport {
	e := r.e
	demand := e.hostPoolRun.demand()
	hosts := e.hostPoolRun.hosts()
	byName := map[string]*HostPoolView{}
	get := func(name string) *HostPoolView {
		v := byName[name]
		if v == nil {
			v = &HostPoolView{Name: name, Floor: e.cfg.HostPools.Floors[name], Demand: demand[name]}
			byName[name] = v
		}
		return v
	}
	get(model.DefaultHostPool)
	for name := range e.cfg.HostPools.Floors {
		get(name)
	}
	for name := range demand {
		get(name)
	}
	e.poolsMu.RLock()
	for _, p := range e.c.Pools.ByPath {
		for _, name := range p.HostPools {
			get(name)
		}
	}
	e.poolsMu.RUnlock()
	for _, h := range hosts {
		v := get(h.Pool)
		v.Hosts = append(v.Hosts, h.ID)
		if h.Target != "" {
			v.Moving = append(v.Moving, h.ID)
		}
		if h.InService {
			v.InService++
			v.Capacity = v.Capacity.Add(h.Capacity)
			v.Allocated = v.Allocated.Add(h.Allocated)
		}
	}
	out := HostPoolReport{}
	if e.cfg.HostPools.Period > 0 {
		out.Period = e.cfg.HostPools.Period
	}
	for _, v := range byName {
		slices.Sort(v.Hosts)
		slices.Sort(v.Moving)
		out.Pools = append(out.Pools, *v)
	}
	sort.Slice(out.Pools, func(i, j int) bool { return out.Pools[i].Name < out.Pools[j].Name })
	e.hostPools.mu.Lock()
	out.Recent = slices.Clone(e.hostPools.recent)
	e.hostPools.mu.Unlock()
	slices.Reverse(out.Recent)
	return out
}
