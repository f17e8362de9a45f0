package maintenance

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// ReasonHostDrained is recorded on runs a host drain took down.
const ReasonHostDrained = "HOST_DRAINED"

// DrainHost is a host being drained (or marked down).
type DrainHost struct {
	ID model.HostID
	// Deadline is when batch runs still there are killed; zero: never,
	// they finish.
	Deadline time.Time
	// Down: the host was marked down; nothing waits any more.
	Down bool
	// Tasks is how many runs of the shard the host still holds.
	Tasks int
}

// DrainRun is a run on a draining host.
type DrainRun struct {
	Job      model.JobID
	Instance uint32
	Host     model.HostID
	// Type and Revocable are the kind of the run's job.
	Type      model.JobType
	Revocable bool
	// Gang is the instances of the run's gang, the run's own included; a
	// gang is taken down whole.
	Gang []uint32
	// Restarting: its gang is being restarted already; the drain leaves it.
	Restarting bool
}

// DrainInput is the state one drain step decides from.
type DrainInput struct {
	Now   time.Time
	Hosts []DrainHost
	// Runs are the runs on the hosts, in the order they are considered:
	// when a job's SLA leaves room for some of its instances only, the
	// first ones move first.
	Runs []DrainRun
	// SLA holds every long-running job with a run in Runs.
	SLA map[model.JobID]*sla.Job
}

// DrainKind is what the drain does with one run.
type DrainKind uint8

const (
	// DrainLetRun: the run goes on (a batch run before the deadline, a
	// daemon, whose own loop stops it).
	DrainLetRun DrainKind = iota
	// DrainMove: take the run's gang down under its job's SLA; it runs
	// again elsewhere.
	DrainMove
	// DrainKill: take the run's gang down now: revocable work, a deadline
	// passed, a host marked down.
	DrainKill
	// DrainHold: the run should move but its job's SLA says not now.
	DrainHold
)

var drainKindNames = [...]string{"let-run", "move", "kill", "hold"}

func (k DrainKind) String() string {
	if int(k) < len(drainKindNames) {
		return drainKindNames[k]
	}
	return fmt.Sprintf("DrainKind(%d)", uint8(k))
}

// DrainAction is the drain's decision for one run. Move and Kill take the
// run's whole gang down, with Reason and Message; Hold records Message on
// the run.
type DrainAction struct {
	Kind     DrainKind
	Job      model.JobID
	Instance uint32
	Host     model.HostID
	Reason   string
	Message  string
}

// DrainPlan is the outcome of a drain step.
type DrainPlan struct {
	Actions []DrainAction
	// Drained are the hosts nothing of the shard runs on any more, in the
	// order given.
	Drained []model.HostID
}

// Drain decides a drain step: what happens to every run on a draining
// host. A host marked down kills what runs there; revocable work is killed
// at once; a daemon's own loop stops its instance; a long-running instance
// moves when its job's SLA has room, counting what this step already took
// down, and waits otherwise; a batch run finishes, unless the drain's
// deadline passed. A gang is taken down once however many of its members
// are on draining hosts.
func Drain(in DrainInput) DrainPlan {
	hosts := make(map[model.HostID]*DrainHost, len(in.Hosts))
	for i := range in.Hosts {
		hosts[in.Hosts[i].ID] = &in.Hosts[i]
	}
	var plan DrainPlan
	busy := map[model.HostID]bool{}
	type gangKey struct {
		job   model.JobID
		first uint32
	}
	down := map[gangKey]bool{}
	book := slaBook{jobs: in.SLA, views: map[model.JobID]*sla.Job{}}
	for _, r := range in.Runs {
		h := hosts[r.Host]
		if h == nil {
			continue
		}
		busy[r.Host] = true
		key := gangKey{r.Job, gangOf(r)[0]}
		if r.Restarting || down[key] {
			continue
		}
		a := drainRun(in.Now, h, r)
		if a.Kind == DrainMove {
			if why := book.admit(r); why != "" {
				a.Kind, a.Reason, a.Message = DrainHold, "", draining(r.Host)+"; "+why
			}
		}
		if a.Kind == DrainMove || a.Kind == DrainKill {
			down[key] = true
			book.markDown(r)
		}
		plan.Actions = append(plan.Actions, a)
	}
	for _, h := range in.Hosts {
		if h.Tasks == 0 && !busy[h.ID] {
			plan.Drained = append(plan.Drained, h.ID)
		}
	}
	return plan
}

// slaBook answers the SLA questions of one drain step. It keeps a copy of
// each job's SLA, marked as the step takes gangs down, so later questions
// count them and the input is left alone.
type slaBook struct {
	jobs  map[model.JobID]*sla.Job
	views map[model.JobID]*sla.Job
}

func (b *slaBook) job(id model.JobID) *sla.Job {
	if v, ok := b.views[id]; ok {
		return v
	}
	v := b.jobs[id].Clone()
	b.views[id] = v
	return v
}

// admit says why r's gang may not be taken down now, "" when it may.
func (b *slaBook) admit(r DrainRun) string {
	j := b.job(r.Job)
	if j == nil {
		return "no SLA known for the job"
	}
	return j.Ask(gangOf(r)).Reason()
}

// markDown counts r's gang as disrupted from now on.
func (b *slaBook) markDown(r DrainRun) {
	if j := b.job(r.Job); j != nil {
		j.Take(gangOf(r))
	}
}

// drainRun decides for one run, before its job's SLA is asked.
func drainRun(now time.Time, h *DrainHost, r DrainRun) DrainAction {
	a := DrainAction{Job: r.Job, Instance: r.Instance, Host: r.Host}
	msg := draining(r.Host)
	switch {
	case h.Down:
		a.Kind, a.Message = DrainKill, "host "+string(r.Host)+" is marked down"
	case r.Revocable:
		a.Kind, a.Message = DrainKill, msg+"; revocable work stops at once"
	case r.Type == model.JobDaemon:
		a.Kind, a.Message = DrainLetRun, msg+"; the daemon stops its instance itself"
	case r.Type != model.JobBatch:
		a.Kind, a.Message = DrainMove, msg+"; moving elsewhere"
	case h.Deadline.IsZero():
		a.Kind, a.Message = DrainLetRun, msg+"; a batch run finishes"
	case !now.Before(h.Deadline):
		a.Kind, a.Message = DrainKill, msg+"; its deadline passed"
	default:
		a.Kind, a.Message = DrainLetRun, fmt.Sprintf("%s; a batch run may finish within %s", msg, h.Deadline.Sub(now))
	}
	if a.Kind == DrainKill || a.Kind == DrainMove {
		a.Reason = ReasonHostDrained
	}
	return a
}

func draining(h model.HostID) string { return "host " + string(h) + " is draining" }

// gangOf is the instances a run takes down with it.
func gangOf(r DrainRun) []uint32 {
	if len(r.Gang) == 0 {
		return []uint32{r.Instance}
	}
	return r.Gang
}
