package sim

import (
	"context"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
)

// Run reports every host, then ends runs as their time comes and hands
// all reports to sink in batches until ctx ends. Runs keep their state
// across a cancelled Run; a later Run goes on where this one stopped.
func (p *Plugin) Run(ctx context.Context, sink hostmgr.Sink) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer p.running.Store(false)

	// The full host list replaces any host changes not yet reported.
	p.mu.Lock()
	hosts := p.hostListLocked()
	kept := p.events[:0]
	for _, e := range p.events {
		if e.statuses != nil {
			kept = append(kept, e)
		}
	}
	p.events = kept
	p.mu.Unlock()
	sink.HostsUpdated(hosts)

	var timer <-chan time.Time
	var armedFor time.Time
	for {
		now := p.clock.Now()
		next, pending, moreDue := p.endDue(now)
		p.flush(sink)
		if moreDue {
			continue
		}
		if pending && (timer == nil || next.Before(armedFor)) {
			timer, armedFor = p.clock.After(next.Sub(now)), next
			if !p.clock.Now().Before(next) {
				// The clock moved while the timer was armed: it may fire
				// late, so do not rely on it.
				timer = nil
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-p.notify:
		case <-timer:
			timer = nil
		}
	}
}

// endDue ends up to maxEndsPerPass runs whose time has come and returns
// when the next run ends, whether any runs, and whether more are due now.
func (p *Plugin) endDue(now time.Time) (next time.Time, pending, moreDue bool) {
	nowNanos := now.UnixNano()
	p.mu.Lock()
	defer p.mu.Unlock()
	for range maxEndsPerPass {
		r := p.due.peek()
		if r == nil || r.due > nowNanos {
			break
		}
		p.endNaturallyLocked(r)
	}
	probe := p.settleProbesLocked(nowNanos)
	r := p.due.peek()
	switch {
	case r == nil && probe == 0:
		return time.Time{}, false, false
	case r == nil || (probe != 0 && probe < r.due):
		return time.Unix(0, probe), true, false
	}
	return time.Unix(0, r.due), true, r.due <= nowNanos
}

// flush makes the queued sink calls, in order, outside the lock.
func (p *Plugin) flush(sink hostmgr.Sink) {
	p.mu.Lock()
	events := p.events
	p.events = nil
	p.mu.Unlock()
	for _, e := range events {
		switch {
		case e.updated != nil:
			sink.HostsUpdated(e.updated)
		case e.removed != nil:
			sink.HostsRemoved(e.removed)
		case len(e.statuses) > 0:
			sink.TaskStatuses(e.statuses)
		}
	}
}
