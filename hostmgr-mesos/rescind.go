package mesos

import (
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Rescinded offers. The master rescinds an offer when its agent goes,
// when the framework held it past the master's --offer_timeout (keep
// OfferHold below it), or when an operator needs its resources. A RESCIND
// drops the offer from what launches are carved from. An ACCEPT that
// crossed the RESCIND on the wire names an offer the master no longer
// has: the master drops its tasks (TASK_DROPPED with
// REASON_INVALID_OFFERS). Such a launch is not the task's fault, so the
// plugin launches it again, once, with the agent's next offer (waiting up
// to LaunchWait like any launch), without telling the shard; only a second
// drop is reported LOST.

// inFlight is a launch sent in an ACCEPT whose task Mesos has not yet
// reported on.
type inFlight struct {
	launch  hostmgr.Launch
	sentAt  time.Time
	retried bool
}

// inFlightRetention bounds how long a launch is kept for a retry when no
// status of its task arrives at all.
const inFlightRetention = 10 * time.Minute

// noteInFlightLocked remembers the launches of an ACCEPT about to be sent.
func (p *Plugin) noteInFlightLocked(runs []hostmgr.Launch, now time.Time) {
	if len(runs) == 0 {
		return
	}
	if p.inFlight == nil {
		p.inFlight = map[model.RunID]*inFlight{}
	}
	for _, l := range runs {
		if f := p.inFlight[l.Run]; f != nil {
			f.launch, f.sentAt = l, now // a retry keeps its retried mark
			continue
		}
		p.inFlight[l.Run] = &inFlight{launch: l, sentAt: now}
	}
}

// droppedForOffersLocked handles a status of a launched run: a first drop
// for invalid offers parks the launch again and reports true (the status
// is not forwarded); any other status ends the run's time in flight.
func (p *Plugin) droppedForOffersLocked(run model.RunID, st *mesoslib.TaskStatus, now time.Time) bool {
	f := p.inFlight[run]
	if f == nil {
		return false
	}
	delete(p.inFlight, run)
	if st.GetState() != mesoslib.TASK_DROPPED || st.GetReason() != mesoslib.REASON_INVALID_OFFERS || f.retried {
		return false
	}
	r := p.runs[run]
	if r == nil || r.ended {
		return false
	}
	a := p.agents[r.agentID]
	if a == nil {
		return false
	}
	a.hold(r, -1)
	p.forgetCreatedLocked(r)
	delete(p.runs, run)
	f.retried = true
	p.inFlight[run] = f
	p.waitLocked(a, parkedLaunch{launch: f.launch, deadline: now.Add(p.cfg.LaunchWait),
		miss: "its first offer was rescinded before the ACCEPT reached the master"})
	p.log.Info("launch dropped on a rescinded offer; launching again with the next offer", "run", run, "agent", r.agentID)
	return true
}

// expireInFlightLocked forgets launches no status came for.
func (p *Plugin) expireInFlightLocked(now time.Time) {
	for run, f := range p.inFlight {
		if now.Sub(f.sentAt) > inFlightRetention {
			delete(p.inFlight, run)
		}
	}
}
