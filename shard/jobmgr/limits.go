package jobmgr

import (
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"
	"time"
)

// ErrPoolFull: a pool holds as many pending tasks as its limit allows; a
// job that would add more is refused until some of them run or end.
var ErrPoolFull = errors.New("too many pending tasks in the pool")

// Limits returns the limits the engine runs with.
func (e *Engine) Limits() core.Limits { return e.cfg.Limits }

// pendingCount keeps, per pool, the tasks waiting to run as last counted
// (counted) plus those of jobs accepted since (accepted), so that accepting
// a job checks its pool's limit without a count of every job each time:
// the count is redone when older than pendingRecount. It has its own lock.
type pendingCount struct {
	mu       mutex
	counted  map[string]int64
	accepted map[string]int64
	at       time.Time
}

// pendingRecount is how old a count of pending tasks may be.
const pendingRecount = time.Second

// stale reports whether the count should be redone at now.
func (p *pendingCount) stale(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at.IsZero() || now.Sub(p.at) >= pendingRecount
}

// recountPending counts the pending tasks of every job again, when the
// last count is stale; callers hold e.mu. The loop does it at the end of
// each pass.
func (e *Engine) recountPending(now time.Time) {
	if e.pending.stale(now) {
		e.pending.set(e.c.CountPending(), now)
	}
}

// recountIfIdle is recountPending for an API call: it counts only when the
// loop is not in a pass, so that accepting a job never waits for one (the
// loop counts at the end of its pass).
func (e *Engine) recountIfIdle() {
	now := e.cfg.Clock.Now()
	if !e.pending.stale(now) || !e.tryLock() {
		return
	}
	defer e.mu.Unlock()
	e.recountPending(now)
}

// reserve admits n more pending tasks into pool, or refuses them.
func (p *pendingCount) reserve(pool string, n, limit int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	have := p.counted[pool] + p.accepted[pool]
	if n > 0 && have+n > limit {
		return fmt.Errorf("pool %s: %d tasks wait to run and %d more would pass its limit of %d: %w", pool, have, n, limit, ErrPoolFull)
	}
	if p.accepted == nil {
		p.accepted = map[string]int64{}
	}
	p.accepted[pool] += n
	return nil
}

// check refuses n more pending tasks in pool without reserving them.
func (p *pendingCount) check(pool string, n, limit int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if have := p.counted[pool] + p.accepted[pool]; n > 0 && have+n > limit {
		return fmt.Errorf("pool %s: %d tasks wait to run and %d more would pass its limit of %d: %w", pool, have, n, limit, ErrPoolFull)
	}
	return nil
}

// absorbed moves an accepted job's tasks to the counted ones: the engine
// took the job in and its next count includes them.
func (p *pendingCount) absorbed(pool string, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.accepted[pool] -= n
	if p.counted == nil {
		p.counted = map[string]int64{}
	}
	p.counted[pool] += n
}

// set replaces the counted tasks with a fresh count made at now.
func (p *pendingCount) set(counted map[string]int64, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counted, p.at = counted, now
}
