package resmgr

import (
	"fmt"
	"github.com/peloton-federated/peloton/internal/datadriven"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// Scenario files are sequences of commands: a command line, input lines, a
// "----" line, then the expected output up to a blank line. Lines starting
// with '#' between commands are comments. Commands:
//
//	pools [preempt-after=N]      declares the pool tree, one pool a line,
//	/a cpu=R/L/S mem=R/L/S       reservation/limit/share per resource (not
//	                             named: 0/inf/1). The first builds the
//	                             scheduler; later ones call SetTree and
//	                             print the gangs it dropped.
//	enqueue | adopt              one gang (or count consecutive gangs) a
//	job#N pool=/a [prio=P]       line; kind np (default), p or rev;
//	  [np|p|rev] [members=M]     members per gang (default 1); per-task
//	  [count=C] cpu=X mem=Y      resources.
//	remove job#N ...             Remove; prints unknown gangs.
//	finish job#N instance=I      Finished for one member.
//	start job#N ...              Started.
//	joblimit job=J max=M         SetJobLimit.
//	requeue                      plays the shell after preemption: every
//	                             preempting gang is removed (its kill is
//	                             done) and enqueued again as a new run.
//	pass cpu=X [mem=Y] [slack=cpu:A,mem:B] [sla=job:N,...] [quiet]
//	                             runs a pass; prints admissions,
//	                             preemptions and (unless quiet) every
//	                             pool's figures, sorted by path; sla
//	                             bounds how many instances of a job the
//	                             pass may preempt (its SLA room).
//	state job#N ...              prints each gang's state.
//
// Amounts are whole numbers in the model's units (millicores for cpu, MiB,
// devices), "inf" for no limit; shares may be decimal. Amounts print as one
// number when the tree names a single resource, else as cpu:X,mem:Y. Run with -rewrite to regenerate the
// expected output after a deliberate change, then review the diff.
func TestScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		sc := &scenario{t: t, runs: map[GangID]uint32{}}
		return func(c datadriven.Case) string {
			sc.where = c.Where
			return sc.run(c.Command, c.Input)
		}
	})
}

type scenario struct {
	t     *testing.T
	where string
	sched *Scheduler
	kinds []int  // resource kinds named in the tree, in model order
	known []Gang // every gang enqueued or adopted, by enqueue order
	runs  map[GangID]uint32
}

func (sc *scenario) fatalf(format string, args ...any) {
	sc.t.Helper()
	sc.t.Fatalf("%s: %s", sc.where, fmt.Sprintf(format, args...))
}

func (sc *scenario) run(command string, input []string) string {
	fields := strings.Fields(command)
	if fields[0] != "pools" && sc.sched == nil {
		sc.fatalf("%s before pools", fields[0])
	}
	switch fields[0] {
	case "pools":
		return sc.pools(fields[1:], input)
	case "enqueue", "adopt":
		return sc.enqueue(fields[0] == "adopt", input)
	case "remove":
		return sc.eachGang(fields[1:], func(id GangID) string {
			if !sc.sched.Remove(id) {
				return "unknown " + id.String()
			}
			return ""
		})
	case "start":
		return sc.eachGang(fields[1:], func(id GangID) string {
			if !sc.sched.Started(id) {
				return "not admitted " + id.String()
			}
			return ""
		})
	case "finish":
		return sc.finish(fields[1:])
	case "joblimit":
		args := sc.keyValues(fields[1:])
		sc.sched.SetJobLimit(model.JobID(args["job"]), uint32(sc.number(args["max"])))
		return "ok"
	case "requeue":
		return sc.requeue()
	case "pass":
		return sc.pass(fields[1:])
	case "state":
		var lines []string
		sc.eachGang(fields[1:], func(id GangID) string {
			_, st, ok := sc.sched.Lookup(id)
			if !ok {
				lines = append(lines, id.String()+": unknown")
			} else {
				lines = append(lines, id.String()+": "+st.String())
			}
			return ""
		})
		return strings.Join(lines, "\n")
	}
	sc.fatalf("unknown command %q", fields[0])
	return ""
}

func (sc *scenario) keyValues(fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

func (sc *scenario) number(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		sc.fatalf("%q: %v", s, err)
	}
	return v
}

// amount parses a whole amount in the model's units (millicores for cpu),
// "inf" for model.Unlimited.
func (sc *scenario) amount(s string) int64 {
	if s == "inf" {
		return model.Unlimited
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		sc.fatalf("%q: amounts are whole units: %v", s, err)
	}
	return v
}

func (sc *scenario) gangID(s string) GangID {
	job, n, ok := strings.Cut(s, "#")
	v, err := strconv.ParseUint(n, 10, 32)
	if !ok || err != nil {
		sc.fatalf("bad gang id %q (want job#N)", s)
	}
	return GangID{Job: model.JobID(job), Gang: uint32(v)}
}

func (sc *scenario) eachGang(fields []string, f func(GangID) string) string {
	var problems []string
	for _, s := range fields {
		if p := f(sc.gangID(s)); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		return "ok"
	}
	return strings.Join(problems, "\n")
}

func (sc *scenario) pools(args, input []string) string {
	var specs []entitlement.PoolSpec
	named := map[int]bool{}
	for _, line := range input {
		fields := strings.Fields(line)
		spec := entitlement.PoolSpec{Path: fields[0]}
		for k := range model.ResourceKinds {
			spec.Limit = spec.Limit.Set(k, model.Unlimited)
			spec.Share = spec.Share.Set(k, 1)
		}
		for _, f := range fields[1:] {
			name, value, _ := strings.Cut(f, "=")
			k := slices.Index(model.ResourceKinds[:], name)
			parts := strings.Split(value, "/")
			if k < 0 || len(parts) != 3 {
				sc.fatalf("want kind=R/L/S, got %q", f)
			}
			named[k] = true
			spec.Reservation = spec.Reservation.Set(k, sc.amount(parts[0]))
			spec.Limit = spec.Limit.Set(k, sc.amount(parts[1]))
			spec.Share = spec.Share.Set(k, sc.number(parts[2]))
		}
		specs = append(specs, spec)
	}
	tree, err := entitlement.NewTree(specs)
	if err != nil {
		return "error: " + err.Error()
	}
	sc.kinds = sc.kinds[:0]
	for k := range model.ResourceKinds {
		if named[k] {
			sc.kinds = append(sc.kinds, k)
		}
	}
	if sc.sched == nil {
		opts := sc.keyValues(args)
		cfg := Config{}
		if v, ok := opts["preempt-after"]; ok {
			cfg.PreemptAfterPasses = int(sc.number(v))
		}
		sc.sched = New(tree, cfg)
		return "ok"
	}
	gone := sc.sched.SetTree(tree)
	if len(gone) == 0 {
		return "ok"
	}
	var lines []string
	for _, g := range gone {
		lines = append(lines, fmt.Sprintf("dropped %s (pool %s)", g.ID, g.Pool))
	}
	return strings.Join(lines, "\n")
}

func (sc *scenario) enqueue(adopt bool, input []string) string {
	var lines []string
	for _, line := range input {
		fields := strings.Fields(line)
		first := sc.gangID(fields[0])
		g := Gang{ID: first}
		members, count := 1, 1
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "pool":
				g.Pool = v
			case "prio":
				g.Priority = int32(sc.number(v))
			case "np":
			case "p":
				g.Preemptible = true
			case "rev":
				g.Revocable = true
			case "members":
				members = int(sc.number(v))
			case "count":
				count = int(sc.number(v))
			default:
				kind := slices.Index(model.ResourceKinds[:], k)
				if kind < 0 {
					sc.fatalf("unknown gang field %q", f)
				}
				g.PerTask = g.PerTask.Set(kind, sc.amount(v))
			}
		}
		for c := range count {
			g := g
			g.ID.Gang = first.Gang + uint32(c)
			g.Members = sc.members(g.ID, members)
			var err error
			if adopt {
				err = sc.sched.Adopt(g)
			} else {
				err = sc.sched.Enqueue(g)
			}
			if err != nil {
				lines = append(lines, "error: "+err.Error())
				continue
			}
			sc.known = append(sc.known, g)
		}
	}
	if len(lines) == 0 {
		return "ok"
	}
	return strings.Join(lines, "\n")
}

// members numbers a gang's tasks as the job manager does: gang N of size M
// holds instances N*M .. N*M+M-1.
func (sc *scenario) members(id GangID, n int) []Member {
	out := make([]Member, n)
	for i := range out {
		out[i] = Member{Task: model.TaskID{Job: id.Job, Instance: id.Gang*uint32(n) + uint32(i)}, Run: sc.runs[id]}
	}
	return out
}

func (sc *scenario) finish(args []string) string {
	if len(args) != 2 {
		sc.fatalf("want finish job#N instance=I")
	}
	id := sc.gangID(args[0])
	inst := uint32(sc.number(sc.keyValues(args[1:])["instance"]))
	if !sc.sched.Finished(id, model.TaskID{Job: id.Job, Instance: inst}) {
		return "not running"
	}
	return "ok"
}

func (sc *scenario) requeue() string {
	var lines []string
	var kept []Gang
	for _, g := range sc.known {
		_, st, ok := sc.sched.Lookup(g.ID)
		if !ok {
			continue
		}
		if st != Preempting {
			kept = append(kept, g)
			continue
		}
		sc.sched.Remove(g.ID)
		sc.runs[g.ID]++
		for i := range g.Members {
			g.Members[i].Run = sc.runs[g.ID]
		}
		if err := sc.sched.Enqueue(g); err != nil {
			sc.fatalf("enqueue again: %v", err)
		}
		kept = append(kept, g)
		lines = append(lines, "requeued "+g.ID.String())
	}
	sc.known = kept
	if len(lines) == 0 {
		return "nothing to requeue"
	}
	return strings.Join(lines, "\n")
}

func (sc *scenario) resources(s string) model.Resources {
	var r model.Resources
	for _, part := range strings.Split(s, ",") {
		name, v, _ := strings.Cut(part, ":")
		k := slices.Index(model.ResourceKinds[:], name)
		if k < 0 {
			sc.fatalf("bad resources %q (want cpu:X,mem:Y)", s)
		}
		r = r.Set(k, sc.amount(v))
	}
	return r
}

func (sc *scenario) pass(args []string) string {
	var in PassInput
	quiet := false
	for _, f := range args {
		if f == "quiet" {
			quiet = true
			continue
		}
		k, v, _ := strings.Cut(f, "=")
		if k == "slack" {
			in.Slack = sc.resources(v)
			continue
		}
		if k == "sla" {
			in.Disruptable = map[model.JobID]uint32{}
			for _, jr := range strings.Split(v, ",") {
				job, room, _ := strings.Cut(jr, ":")
				in.Disruptable[model.JobID(job)] = uint32(sc.number(room))
			}
			continue
		}
		kind := slices.Index(model.ResourceKinds[:], k)
		if kind < 0 {
			sc.fatalf("unknown pass argument %q", f)
		}
		in.Capacity = in.Capacity.Set(kind, sc.amount(v))
	}
	d := sc.sched.Pass(in)
	var lines []string
	for i := 0; i < len(d.Admit); i += 10 {
		var ids []string
		for _, id := range d.Admit[i:min(i+10, len(d.Admit))] {
			ids = append(ids, id.String())
		}
		lines = append(lines, "admit "+strings.Join(ids, " "))
	}
	for _, p := range d.Preempt {
		lines = append(lines, fmt.Sprintf("preempt %s from %s: %s", p.Gang, p.Pool, p.Reason))
	}
	if len(lines) == 0 {
		lines = append(lines, "no change")
	}
	if quiet {
		return strings.Join(lines, "\n")
	}
	figs := sc.sched.Figures()
	slices.SortFunc(figs, func(a, b PoolFigures) int { return strings.Compare(a.Path, b.Path) })
	width := 0
	for _, f := range figs {
		width = max(width, len(f.Path))
	}
	for _, f := range figs {
		line := fmt.Sprintf("%-*s demand=%s entitlement=%s allocation=%s queued=%d admitted=%d", width, f.Path,
			sc.format(f.Demand), sc.format(f.Entitlement), sc.format(f.Allocation), f.Queued, f.Admitted)
		if !f.SlackEntitlement.IsZero() || !f.RevocableAllocation.IsZero() {
			line += fmt.Sprintf(" slack-entitlement=%s revocable=%s", sc.format(f.SlackEntitlement), sc.format(f.RevocableAllocation))
		}
		if f.Parked > 0 {
			line += fmt.Sprintf(" parked=%d", f.Parked)
		}
		if f.Preempting > 0 {
			line += fmt.Sprintf(" preempting=%d", f.Preempting)
		}
		if f.OverPasses > 0 {
			line += fmt.Sprintf(" over=%d", f.OverPasses)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func formatNumber(v int64) string { return model.FormatUnits(v) }

func (sc *scenario) format(r model.Resources) string {
	if len(sc.kinds) == 1 {
		return formatNumber(r.Get(sc.kinds[0]))
	}
	var parts []string
	for _, k := range sc.kinds {
		parts = append(parts, model.ResourceKinds[k]+":"+formatNumber(r.Get(k)))
	}
	return strings.Join(parts, ",")
}
