package rollout

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// Scenario files drive Step and Job together over passes, with a small
// job in place of the job manager: every instance runs config 1,
// available, until the input says otherwise. Commands:
//
//	job instances=N [gang=G] [limit=L]
//	                  the job: N instances in gangs of G, at most L
//	                  unavailable at once (its SLA; none without limit).
//	update to=V [batch=B] [max-failures=F] [rollback] [min-healthy=D] [paused]
//	       [canary=N [extra]] [auto-promote=D]
//	                  starts an update from the job's config to V
//	                  (extra: the canaries are extra instances).
//	pass [+D]         one pass, D after the last (default 1s). Input
//	                  lines change instances first:
//	                    I[-J] [running|pending|failed] [unavailable|available] [fail]
//	                  (fail: the run failed and restarted, its failure
//	                  count grows). A gang the plan restarts is pending on
//	                  the target until the input says it runs; a gang the
//	                  plan relabels takes the target at once. Output: the
//	                  plan, then the update's record.
//	pause, resume     the operator's pause and resume.
//	promote           the operator's promotion of the canaries.
//
// Run with -rewrite to regenerate the expected output after a deliberate
// change, then review the diff.
func TestScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		w := &world{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		return func(c datadriven.Case) string {
			out, err := w.run(c.Fields(), c.Input)
			if err != nil {
				t.Fatalf("%s: %v", c.Where, err)
			}
			return out
		}
	})
}

// instance is one instance of the scenario's job.
type instance struct {
	config    uint64
	state     model.TaskState
	available bool
	failures  uint32
	// ended: stopped as beyond the job's instance count.
	ended bool
}

type world struct {
	now      time.Time
	gang     uint32
	limit    uint32
	hasLimit bool
	config   uint64
	inst     []instance
	ro       *Job
	// base is the job's own instance count; inst may hold more (extra
	// canaries, and instances stopped beyond the count).
	base uint32
}

func (w *world) run(f []string, input []string) (string, error) {
	args, err := keyValues(f[1:])
	if err != nil {
		return "", err
	}
	switch f[0] {
	case "job":
		return w.job(args)
	case "update":
		return w.update(args)
	case "pass":
		return w.pass(f[1:], input)
	case "pause", "resume":
		w.ro.Update.Paused = f[0] == "pause"
		return "ok", nil
	case "promote":
		if err := w.ro.Promote("alice"); err != nil {
			return "refused: " + err.Error(), nil
		}
		return "ok", nil
	}
	return "", fmt.Errorf("unknown command %q", f[0])
}

func keyValues(f []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range f {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out, nil
}

func num(args map[string]string, key string, def uint32) uint32 {
	if v, ok := args[key]; ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err == nil {
			return uint32(n)
		}
	}
	return def
}

func (w *world) job(args map[string]string) (string, error) {
	n := num(args, "instances", 0)
	if n == 0 {
		return "", fmt.Errorf("job: instances=N is required")
	}
	w.gang, w.config = num(args, "gang", 1), 1
	_, w.hasLimit = args["limit"]
	w.limit = num(args, "limit", 0)
	w.base = n
	w.inst = make([]instance, n)
	for i := range w.inst {
		w.inst[i] = instance{config: 1, state: model.TaskRunning, available: true}
	}
	return "ok", nil
}

func (w *world) update(args map[string]string) (string, error) {
	to := uint64(num(args, "to", 0))
	if to == 0 {
		return "", fmt.Errorf("update: to=V is required")
	}
	u := &model.Update{ID: model.MakeUpdateID("job", to), FromVersion: w.config, ToVersion: to, State: model.UpdateRollingForward,
		BatchSize: num(args, "batch", 0), MaxFailures: num(args, "max-failures", 0), InstancesTotal: uint32(len(w.inst))}
	_, u.RollbackOnFailure = args["rollback"]
	_, u.Paused = args["paused"]
	for key, field := range map[string]*time.Duration{"min-healthy": &u.MinHealthy, "auto-promote": &u.AutoPromoteAfter} {
		if d, ok := args[key]; ok {
			v, err := time.ParseDuration(d)
			if err != nil {
				return "", err
			}
			*field = v
		}
	}
	u.Canary = num(args, "canary", 0)
	_, u.CanaryExtra = args["extra"]
	w.ro, w.config = Start(u), to
	return "ok", nil
}

// change applies one input line: I[-J] and what becomes of them.
func (w *world) change(line string) error {
	f := strings.Fields(line)
	lo, hi, _ := strings.Cut(f[0], "-")
	a, err := strconv.Atoi(lo)
	if err != nil {
		return fmt.Errorf("%q: instance: %v", line, err)
	}
	b := a
	if hi != "" {
		if b, err = strconv.Atoi(hi); err != nil {
			return fmt.Errorf("%q: instance: %v", line, err)
		}
	}
	for i := a; i <= b && i < len(w.inst); i++ {
		in := &w.inst[i]
		for _, word := range f[1:] {
			switch word {
			case "running":
				in.state, in.available = model.TaskRunning, true
			case "pending":
				in.state, in.available = model.TaskPending, false
			case "unavailable", "available":
				in.available = word == "available"
			case "fail":
				in.failures++
				in.state, in.available = model.TaskPending, false
			default:
				return fmt.Errorf("%q: unknown word %q", line, word)
			}
		}
	}
	return nil
}

func (w *world) pass(f []string, input []string) (string, error) {
	step := time.Second
	if len(f) > 0 {
		d, err := time.ParseDuration(strings.TrimPrefix(f[0], "+"))
		if err != nil {
			return "", err
		}
		step = d
	}
	w.now = w.now.Add(step)
	for _, line := range input {
		if err := w.change(line); err != nil {
			return "", err
		}
	}
	ro := w.ro
	if !ro.Running() {
		return "the update ended", nil
	}
	switch verdict, why := ro.CountFailures(w.task); verdict {
	case Fail:
		ro.End(model.UpdateFailed, why, w.now)
		return w.record(), nil
	case RollBack:
		ro.RollBack(why)
		w.config = ro.Update.FromVersion
		return w.record(), nil
	}
	w.grow()
	plan := Step(w.input())
	ro.Settle(plan, w.now)
	target := ro.Target()
	for _, g := range plan.Remove {
		for _, i := range w.members(g) {
			w.inst[i].ended, w.inst[i].available = true, false
		}
	}
	for _, g := range plan.Relabel {
		for _, i := range w.members(g) {
			w.inst[i].config = target
		}
	}
	for _, g := range plan.Restart {
		var runs []*model.TaskRuntime
		for _, i := range w.members(g) {
			runs = append(runs, w.task(uint32(i)))
			w.inst[i].config, w.inst[i].state, w.inst[i].available = target, model.TaskPending, false
		}
		ro.Restarted(g, runs)
	}
	ro.AutoPromote(plan, w.now)
	ro.Report(plan, w.count())
	if plan.Complete {
		st, msg := ro.Outcome(plan)
		ro.End(st, msg, w.now)
	}
	return planLine(plan) + "\n" + w.record(), nil
}

func (w *world) task(i uint32) *model.TaskRuntime {
	in := w.inst[i]
	return &model.TaskRuntime{ID: model.TaskID{Job: "job", Instance: i}, ConfigVersion: in.config, State: in.state, Failures: in.failures}
}

func (w *world) members(g uint32) []int {
	var out []int
	for i := int(g * w.gang); i < int((g+1)*w.gang) && i < len(w.inst); i++ {
		out = append(out, i)
	}
	return out
}

// input describes the job's gangs to Step, as the job manager does.
func (w *world) input() Input {
	in := Input{Now: w.now, Instances: w.count(), GangSize: w.gang}
	w.ro.Configure(&in)
	target := w.ro.Target()
	for g := uint32(0); int(g*w.gang) < len(w.inst); g++ {
		rg := Gang{Gang: g, Size: uint32(len(w.members(g)))}
		if g*w.gang >= in.Instances {
			rg.Removed, rg.Ended = true, true
			for _, i := range w.members(g) {
				rg.Ended = rg.Ended && w.inst[i].ended
			}
			in.Gangs = append(in.Gangs, rg)
			continue
		}
		w.ro.Describe(&rg)
		for _, i := range w.members(g) {
			switch in := w.inst[i]; {
			case in.config != target:
				rg.Stale, rg.Queued = true, true
			case in.state != model.TaskRunning || !in.available:
				rg.Settling = true
			}
		}
		in.Gangs = append(in.Gangs, rg)
	}
	if w.hasLimit {
		job := &sla.Job{Limit: w.limit}
		for i, in := range w.inst {
			if !in.ended { // as the job manager's SLA view: every instance not stopped
				job.Instances = append(job.Instances, sla.Instance{ID: uint32(i), Available: in.state == model.TaskRunning && in.available})
			}
		}
		in.SLA = job
	}
	return in
}

func planLine(p Plan) string {
	var parts []string
	for _, l := range []struct {
		name string
		gs   []uint32
	}{{"restart", p.Restart}, {"remove", p.Remove}, {"relabel", p.Relabel}, {"settled", p.Settled}, {"healthy", p.StartHealthy}, {"unhealthy", p.ClearHealthy}} {
		if len(l.gs) > 0 {
			parts = append(parts, fmt.Sprintf("%s=%v", l.name, l.gs))
		}
	}
	parts = append(parts, fmt.Sprintf("done=%d in-flight=%d", p.Done, p.InFlight))
	if p.Waiting != "" {
		parts = append(parts, fmt.Sprintf("waiting=%q", p.Waiting))
	}
	if p.Canaries > 0 {
		parts = append(parts, fmt.Sprintf("canaries=%d/%d", p.CanariesDone, p.Canaries))
	}
	if p.AwaitingPromotion {
		parts = append(parts, "awaiting-promotion")
	}
	if p.Complete {
		parts = append(parts, "complete")
	}
	return "plan: " + strings.Join(parts, " ")
}

func (w *world) record() string {
	u := w.ro.Update
	return fmt.Sprintf("update: %s done=%d/%d in-flight=%d failed=%d config=%d %q", u.State, u.InstancesDone, u.InstancesTotal, u.InstancesInFlight, u.InstancesFailed, w.config, u.Message)
}

// count is how many instances the job runs at this step (its own, plus
// extra canaries waiting for the promotion).
func (w *world) count() uint32 {
	if w.ro == nil {
		return w.base
	}
	return w.ro.Instances(w.base)
}

// grow makes the instances the count asks for that do not exist yet, on
// the update's target, not running yet (as the job manager creates them).
func (w *world) grow() {
	for uint32(len(w.inst)) < w.count() {
		w.inst = append(w.inst, instance{config: w.ro.Target(), state: model.TaskPending})
	}
}
