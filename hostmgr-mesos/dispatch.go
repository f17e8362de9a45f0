package mesos

import (
	"context"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/model"
)

// The dispatcher sends the calls that follow from launches and status
// updates: ACCEPTs of agents with waiting launches and ACKNOWLEDGEs. It
// takes a call worker first and only then decides what to send, so an
// ACCEPT is carved from the agent's offers when it can go out, and
// carries every launch that waits on the agent by then: under load,
// launches group per agent by themselves, and an idle plugin sends at
// once. ACKNOWLEDGEs and ACCEPTs take turns, so that status updates keep
// flowing while a big launch goes out and the other way round. The event
// loop only queues acknowledgements, so a slow master never holds up the
// reading of its event stream.

// pendingAck is an acknowledgement to send on the subscription that
// received its update.
type pendingAck struct {
	c       *conn
	agentID string
	run     model.RunID
	uuid    []byte
}

// kickDispatch wakes the dispatcher.
func (p *Plugin) kickDispatch() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// dispatch sends queued ACCEPTs and acknowledgements until ctx ends.
func (p *Plugin) dispatch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		}
		for {
			select {
			case p.workers <- struct{}{}:
			case <-ctx.Done():
				return
			}
			p.mu.Lock()
			send := p.nextCallLocked(ctx, p.clock.Now())
			p.mu.Unlock()
			if send == nil {
				<-p.workers
				break
			}
			go func() {
				defer func() { <-p.workers }()
				send()
			}()
		}
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
