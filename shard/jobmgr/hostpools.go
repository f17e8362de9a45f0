package jobmgr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/hostpool"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/store"
)

// HostPoolConfig tunes the host pool policy, which moves hosts between
// host pools as demand shifts (package hostpool decides; this file
// applies).
type HostPoolConfig struct {
	// Period is how often the policy looks at demand and moves hosts; 0
	// means DefaultHostPoolPeriod, a negative period turns the policy off
	// (hosts then change host pools only when an operator moves them).
	Period time.Duration
	// Floors is the fewest hosts in service each host pool keeps.
	Floors map[string]int
	// DrainDeadline is how long batch runs on a host drained for a move
	// may go on before they are killed to run elsewhere; 0 means
	// DefaultHostPoolDrainDeadline.
	DrainDeadline time.Duration
}

// Defaults of HostPoolConfig.
const (
	DefaultHostPoolPeriod        = 10 * time.Second
	DefaultHostPoolDrainDeadline = 10 * time.Minute
)

// maxRecentMoves bounds the host pool moves kept to show.
const maxRecentMoves = 50

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

// loadHostPoolMoves reads the stored moves, keeping the latest.
func (e *Engine) loadHostPoolMoves(ctx context.Context) {
	evs, err := e.cfg.Store.ListEvents(ctx, store.EventQuery{Job: model.HostPoolEvents})
	if err != nil {
		e.log.Warn("reading host pool moves failed; recent moves start empty", "err", err)
		return
	}
	e.hostPools.mu.Lock()
	defer e.hostPools.mu.Unlock()
	for _, ev := range evs {
		e.noteMove(ev)
	}
}

// noteMove keeps a move event; hostPools.mu is held.
func (e *Engine) noteMove(ev model.Event) {
	b := &e.hostPools
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
func (e *Engine) recordMove(m model.HostPoolMove, now time.Time) {
	evs := []Event{{Time: now, Job: model.HostPoolEvents, HostPoolMove: &m}}
	e.emit(evs) // numbers it
	e.hostPools.mu.Lock()
	e.noteMove(evs[0])
	e.hostPools.mu.Unlock()
	e.log.Info("host pool move", "host", m.Host, "from", m.From, "to", m.To, "phase", m.Phase, "reason", m.Reason)
}

// runHostPools runs the policy every period until ctx ends.
func (e *Engine) runHostPools(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.cfg.Clock.After(e.cfg.HostPools.Period):
		}
		e.hostPoolPass(ctx)
	}
}

// hostPoolPass feeds the policy what the shard sees now and applies its
// moves.
func (e *Engine) hostPoolPass(ctx context.Context) {
	now := e.cfg.Clock.Now()
	in := hostpool.Input{Demand: e.hostPoolDemand(), Floors: e.cfg.HostPools.Floors, MinStay: e.cfg.HostPools.Period, Now: now}
	in.Hosts = e.policyHosts()
	for _, m := range hostpool.Plan(in) {
		if err := e.applyMove(ctx, m, now); err != nil && !errors.Is(err, errSkip) && ctx.Err() == nil {
			e.log.Warn("host pool move failed; the next pass tries again", "host", m.Host, "move", m.Kind, "err", err)
		}
	}
}

// policyHosts describes the reported hosts to the policy.
func (e *Engine) policyHosts() []hostpool.Host {
	views := e.cfg.Hosts.Snapshot()
	e.hostPools.mu.Lock()
	lastMoved := make(map[model.HostID]time.Time, len(e.hostPools.lastMoved))
	for id, t := range e.hostPools.lastMoved {
		lastMoved[id] = t
	}
	e.hostPools.mu.Unlock()
	e.hosts.mu.Lock()
	defer e.hosts.mu.Unlock()
	out := make([]hostpool.Host, 0, len(views))
	for i := range views {
		v := &views[i]
		if v.Hostname == "" {
			continue
		}
		h := hostpool.Host{ID: v.ID, Pool: model.DefaultHostPool, Capacity: v.Capacity, Allocated: v.Allocated,
			Tasks: v.Tasks, LastMoved: lastMoved[v.ID]}
		h.InService = v.State == model.HostUp || v.State == model.HostDraining
		if rec := e.hosts.recs[v.ID]; rec != nil {
			h.Pool, h.Target = rec.Pool(), rec.HostPoolTarget
			if rec.Down || (rec.Draining && rec.HostPoolTarget == "") {
				h.InService = false // an operator holds it
			}
		}
		out = append(out, h)
	}
	return out
}

// hostPoolDemand is, per host pool, what tasks of resource pools that
// name it first wait for: tasks admitted that found no host.
func (e *Engine) hostPoolDemand() map[string]model.Resources {
	e.lock()
	defer e.mu.Unlock()
	out := map[string]model.Resources{}
	byPool := map[string][]string{}
	for _, id := range e.ready {
		je, t := e.task(id)
		if t == nil || t.State != model.TaskReady || t.Message == "" || je.job.Spec.Revocable {
			continue // not tried yet, or placed on slack
		}
		pools, ok := byPool[je.job.Spec.Pool]
		if !ok {
			pools = e.resourceHostPools(je.job.Spec.Pool)
			byPool[je.job.Spec.Pool] = pools
		}
		if len(pools) > 0 {
			out[pools[0]] = out[pools[0]].Add(je.taskResources(t))
		}
	}
	return out
}

// resourceHostPools returns the host pools the tasks of a resource pool
// may use: those of the pool, or of its nearest ancestor that names some;
// nil means any.
func (e *Engine) resourceHostPools(path string) []string {
	e.poolsMu.RLock()
	defer e.poolsMu.RUnlock()
	for p, ok := path, true; ok; p, ok = entitlement.ParentPath(p) {
		if pool := e.pools[p]; pool != nil && len(pool.HostPools) > 0 {
			return pool.HostPools
		}
	}
	return nil
}

// hostPoolOf returns the host pool a host is in.
func (e *Engine) hostPoolOf(id model.HostID) string {
	e.hosts.mu.Lock()
	defer e.hosts.mu.Unlock()
	if r := e.hosts.recs[id]; r != nil {
		return r.Pool()
	}
	return model.DefaultHostPool
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
func (e *Engine) applyMove(ctx context.Context, m hostpool.Move, now time.Time) error {
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
			rec.DrainDeadline = now.Add(e.cfg.HostPools.DrainDeadline)
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
		return fmt.Errorf("unknown move %v: %w", m.Kind, ErrInvalid)
	}
	if _, err := e.changeHost(ctx, m.Host, change); err != nil {
		return err
	}
	e.recordMove(mv, now)
	return nil
}

// changeHost applies change to a host's record (a copy of what is kept,
// with the host as reported now), stores it, and applies its drain.
func (e *Engine) changeHost(ctx context.Context, id model.HostID, change func(rec *model.HostRecord) error) (*model.HostRecord, error) {
	e.hosts.writeMu.Lock()
	defer e.hosts.writeMu.Unlock()
	now := e.cfg.Clock.Now()
	v, reported := e.cfg.Hosts.View(id)
	reported = reported && v.Hostname != ""
	e.hosts.mu.Lock()
	old := e.hosts.recs[id]
	e.hosts.mu.Unlock()
	if old == nil && !reported {
		return nil, fmt.Errorf("host %s: %w", id, ErrNotFound)
	}
	rec := &model.HostRecord{}
	if old != nil {
		*rec = *old
	}
	if reported {
		rec.Host, rec.LastSeen = v.Host, now
	}
	if err := change(rec); err != nil {
		return nil, err
	}
	if err := e.cfg.Store.PutHosts(ctx, []*model.HostRecord{rec}); err != nil {
		return nil, fmt.Errorf("store host %s: %w", id, err)
	}
	e.hosts.mu.Lock()
	e.hosts.recs[id] = rec
	e.hosts.mu.Unlock()
	e.cfg.Hosts.SetDraining(id, rec.Draining)
	e.inboxMu.Lock()
	e.hostsMoved = true
	e.staleHosts[id] = true
	e.inboxMu.Unlock()
	e.wake()
	return e.hostRecord(rec), nil
}

// setHostPool puts a host in a host pool at once. A move of the policy
// under way for the host is called off (its drain ends).
func (e *Engine) setHostPool(ctx context.Context, id model.HostID, pool string) (*model.HostRecord, error) {
	if !model.ValidHostPoolName(pool) {
		return nil, fmt.Errorf("host pool %q: want 1 to %d lowercase letters, digits and -, starting with a letter: %w",
			pool, model.MaxHostPoolName, ErrInvalid)
	}
	now := e.cfg.Clock.Now()
	var from string
	rec, err := e.changeHost(ctx, id, func(rec *model.HostRecord) error {
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
		e.recordMove(model.HostPoolMove{Host: id, From: from, To: pool, Phase: model.HostPoolMoveDone, Reason: "set by an operator"}, now)
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
	demand := e.hostPoolDemand()
	hosts := e.policyHosts()
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
	for _, p := range e.pools {
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
