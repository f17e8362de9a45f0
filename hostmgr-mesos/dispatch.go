package mesos

import (
	"context"
	"sync"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/model"
)

// The dispatcher sends the calls that follow from launches and status
// updates, ACCEPTs of agents with waiting launches and ACKNOWLEDGEs, on
// CallWorkers long-lived workers. A worker decides what to send only once
// it is free, so an ACCEPT is carved from the agent's offers when it can
// go out and carries every launch that waits on the agent by then: under
// load, launches group per agent by themselves, and an idle plugin sends
// at once. ACKNOWLEDGEs and ACCEPTs take turns, so that status updates
// keep flowing while a big launch goes out and the other way round. The
// event loop only queues acknowledgements, so a slow master never holds
// up the reading of its event stream.

// pendingAck is an acknowledgement to send on the subscription that
// received its update.
type pendingAck struct {
	c       *conn
	agentID string
	run     model.RunID
	uuid    []byte
}

// kickDispatch wakes a call worker.
func (p *Plugin) kickDispatch() {
	p.work.Signal()
}

// dispatch runs CallWorkers workers that send queued ACCEPTs and
// acknowledgements until ctx ends.
func (p *Plugin) dispatch(ctx context.Context) {
	p.mu.Lock()
	p.workGen++
	gen := p.workGen
	p.mu.Unlock()
	var wg sync.WaitGroup
	for range p.cfg.CallWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.callWorker(ctx, gen)
		}()
	}
	<-ctx.Done()
	p.mu.Lock()
	if p.workGen == gen {
		p.workGen++
	}
	p.mu.Unlock()
	p.work.Broadcast()
	wg.Wait()
}

// callWorker takes the next call when it is free to send it, and wakes
// another worker for what may be left, until its generation of workers
// is over.
func (p *Plugin) callWorker(ctx context.Context, gen int) {
	for {
		p.mu.Lock()
		var send func()
		for p.workGen == gen {
			if send = p.nextCallLocked(ctx, p.clock.Now()); send != nil {
				break
			}
			p.work.Wait()
		}
		p.mu.Unlock()
		if send == nil {
			return
		}
		p.work.Signal()
		send()
	}
}

// nextCallLocked picks the next call to send, nil when none waits.
func (p *Plugin) nextCallLocked(ctx context.Context, now time.Time) func() {
	for range 2 {
		p.ackTurn = !p.ackTurn
		var send func()
		if p.ackTurn {
			send = p.nextAckLocked(ctx)
		} else {
			send = p.nextAcceptLocked(ctx, now)
		}
		if send != nil {
			return send
		}
	}
	return nil
}

// nextAckLocked pops the oldest acknowledgement of the current
// subscription; those of an earlier one are dropped (the master resends
// what was not acknowledged).
func (p *Plugin) nextAckLocked(ctx context.Context) func() {
	for len(p.acks) > 0 {
		a := p.acks[0]
		p.acks[0] = pendingAck{}
		p.acks = p.acks[1:]
		if a.c == nil || a.c != p.conn {
			continue
		}
		return func() {
			if err := p.call(ctx, a.c, calls.Acknowledge(a.agentID, string(a.run), a.uuid)); err != nil {
				p.log.Debug("acknowledge failed; the agent will resend", "run", a.run, "err", err)
			}
		}
	}
	return nil
}

// nextAcceptLocked carves the ACCEPT of the agent that has been ready
// longest: every waiting launch its held offers fit.
func (p *Plugin) nextAcceptLocked(ctx context.Context, now time.Time) func() {
	c := p.conn
	if c == nil {
		return nil
	}
	for len(p.ready) > 0 {
		a := p.ready[0]
		p.ready[0] = nil
		p.ready = p.ready[1:]
		a.ready = false
		if len(a.waiting) == 0 || len(a.offers) == 0 {
			continue
		}
		ac, rest := p.matchLocked(a, a.waiting, now)
		for _, l := range ac.runs {
			delete(p.waiting, l.Run)
		}
		clear(a.waiting[len(rest):])
		a.waiting = append(a.waiting[:0], rest...)
		if len(ac.tasks) == 0 {
			continue
		}
		p.noteInFlightLocked(ac.runs, now)
		return func() { p.sendAccept(ctx, c, ac) }
	}
	return nil
}
