package policy

import (
	"fmt"
	"github.com/peloton-federated/peloton/internal/datadriven"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// epoch is time zero of the scenario files; times are durations after it.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Scenario files are sequences of commands. Each is a command line, input
// lines, a "----" line, then the expected output up to a blank line. Lines
// starting with '#' between commands are comments. Resources are written
// "cpu:100,mem:512" (inf allowed), cpu in decimal cores as the API has it,
// the rest in whole units; times are durations after a fixed epoch.
// Constraints: "zone==a", "zone!=a", "zone~a|b" (in), "zone!~a|b" (not
// in), "+ssd" (exists), "-ssd" (not exists), joined with "&&" (all of) and
// then "||" (any of). Commands:
//
//	regions                    sets the regions, one a line:
//	A capacity=R alloc=R health=alive|suspect|failed seen=T labels=k:v|v,k2:v
//	usage                      sets pool usage, one a line:
//	A /p demand=R alloc=R
//	pools                      sets the federated pools (limit defaults to inf):
//	/p reservation=R limit=R
//	split now=T max-age=D      runs SplitPools; prints and keeps the shares.
//	shares                     sets the shares by hand, one a line:
//	A /p reservation=R limit=R
//	route pool=/p per-task=R instances=N [region=A] [allowed=A,B]
//	                           runs ChooseRegion; input lines are constraints.
//	health suspect=D fail=D recover=D
//	                           starts a health tracker.
//	observe                    feeds it, one event a line: "T A reachable/members",
//	                           "T fence A", "T unfence A", "T tick",
//	                           "T unreachable-since A T0" (members confirmed
//	                           failed, suspect since T0); prints the
//	                           transitions and the final states.
//	jobs                       sets the relocatable jobs, one a line:
//	j1 region=C pool=/p per-task=R remaining=N [targets=A,B] [c=CONSTRAINT]...
//	plan failed=C              runs PlanRelocation.
//	plan-all                   runs PlanAll.
//
// Run with -rewrite to regenerate the expected output after a deliberate
// change, then review the diff.
func TestScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		sc := &scenario{t: t}
		return func(c datadriven.Case) string {
			sc.where = c.Where
			return sc.run(c.Command, c.Input)
		}
	})
}

type scenario struct {
	t       *testing.T
	where   string
	kinds   [len(model.ResourceKinds)]bool // resource kinds named so far
	regions []RegionState
	pools   []model.Pool
	shares  Shares
	tracker *HealthTracker
	jobs    map[string][]RelocatableJob
}

func (sc *scenario) run(command string, input []string) string {
	fields := strings.Fields(command)
	args := sc.args(fields[1:])
	switch fields[0] {
	case "regions":
		return sc.setRegions(input)
	case "usage":
		return sc.setUsage(input)
	case "pools":
		return sc.setPools(input)
	case "split":
		return sc.split(args)
	case "shares":
		return sc.setShares(input)
	case "route":
		return sc.route(args, input)
	case "health":
		return sc.startHealth(args)
	case "observe":
		return sc.observe(input)
	case "jobs":
		return sc.setJobs(input)
	case "plan":
		return formatPlan(PlanRelocation(args["failed"], sc.allJobs(args["failed"]), sc.regions, sc.pools), "")
	case "plan-all":
		return sc.planAll()
	}
	sc.t.Fatalf("%s: unknown command %q", sc.where, fields[0])
	return ""
}

// args parses key=value fields; repeated keys are joined with ";".
func (sc *scenario) args(fields []string) map[string]string {
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			sc.t.Fatalf("%s: want key=value, got %q", sc.where, f)
		}
		if prev, dup := out[k]; dup {
			v = prev + ";" + v
		}
		out[k] = v
	}
	return out
}

func (sc *scenario) fatalf(format string, a ...any) {
	sc.t.Helper()
	sc.t.Fatalf(sc.where+": "+format, a...)
}

func (sc *scenario) resources(s string) model.Resources {
	var r model.Resources
	if s == "" {
		return r
	}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(part, ":")
		k := slices.Index(model.ResourceKinds[:], name)
		if !ok || k < 0 {
			sc.fatalf("want kind:amount, got %q", part)
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			sc.fatalf("%q: %v", part, err)
		}
		sc.kinds[k] = true
		r = r.Set(k, model.UnitsOf(k, v))
	}
	return r
}

func (sc *scenario) at(s string) time.Time {
	if s == "" {
		return epoch
	}
	return epoch.Add(sc.duration(s))
}

func (sc *scenario) duration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		sc.fatalf("%v", err)
	}
	return d
}

func (sc *scenario) uint(s string) uint32 {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		sc.fatalf("%v", err)
	}
	return uint32(n)
}

// constraint parses one constraint expression.
func (sc *scenario) constraint(s string) model.Constraint {
	var anyOf []model.Constraint
	for _, alt := range strings.Split(s, "||") {
		var allOf []model.Constraint
		for _, leaf := range strings.Split(alt, "&&") {
			allOf = append(allOf, sc.leaf(strings.TrimSpace(leaf)))
		}
		if len(allOf) == 1 {
			anyOf = append(anyOf, allOf[0])
		} else {
			anyOf = append(anyOf, model.Constraint{AllOf: allOf})
		}
	}
	if len(anyOf) == 1 {
		return anyOf[0]
	}
	return model.Constraint{AnyOf: anyOf}
}

func (sc *scenario) leaf(s string) model.Constraint {
	switch {
	case strings.HasPrefix(s, "+"):
		return model.Constraint{Key: s[1:], Op: model.OpExists}
	case strings.HasPrefix(s, "-"):
		return model.Constraint{Key: s[1:], Op: model.OpNotExists}
	}
	for _, op := range []struct {
		sep string
		op  model.ConstraintOp
	}{{"!~", model.OpNotIn}, {"==", model.OpEquals}, {"!=", model.OpNotEquals}, {"~", model.OpIn}} {
		if k, v, ok := strings.Cut(s, op.sep); ok {
			return model.Constraint{Key: k, Op: op.op, Values: strings.Split(v, "|")}
		}
	}
	sc.fatalf("bad constraint %q", s)
	return model.Constraint{}
}

func (sc *scenario) list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (sc *scenario) setRegions(input []string) string {
	sc.regions = nil
	sc.kinds = [len(model.ResourceKinds)]bool{}
	for _, line := range input {
		fields := strings.Fields(line)
		a := sc.args(fields[1:])
		r := RegionState{
			Name:       fields[0],
			Capacity:   sc.resources(a["capacity"]),
			Allocation: sc.resources(a["alloc"]),
			Seen:       sc.at(a["seen"]),
			Pools:      map[string]PoolUsage{},
		}
		switch a["health"] {
		case "", "alive":
		case "suspect":
			r.Health = HealthSuspect
		case "failed":
			r.Health = HealthFailed
		default:
			sc.fatalf("bad health %q", a["health"])
		}
		if a["labels"] != "" {
			r.HostLabels = map[string][]string{}
			for _, kv := range strings.Split(a["labels"], ",") {
				k, v, _ := strings.Cut(kv, ":")
				r.HostLabels[k] = append(r.HostLabels[k], strings.Split(v, "|")...)
			}
		}
		sc.regions = append(sc.regions, r)
	}
	return "ok"
}

func (sc *scenario) region(name string) *RegionState {
	for i := range sc.regions {
		if sc.regions[i].Name == name {
			return &sc.regions[i]
		}
	}
	sc.fatalf("unknown region %q", name)
	return nil
}

func (sc *scenario) setUsage(input []string) string {
	for _, line := range input {
		fields := strings.Fields(line)
		a := sc.args(fields[2:])
		sc.region(fields[0]).Pools[fields[1]] = PoolUsage{Demand: sc.resources(a["demand"]), Allocation: sc.resources(a["alloc"])}
	}
	return "ok"
}

func (sc *scenario) setPools(input []string) string {
	sc.pools = nil
	inf := model.Unlimited
	for _, line := range input {
		fields := strings.Fields(line)
		a := sc.args(fields[1:])
		p := model.Pool{Path: fields[0], Reservation: sc.resources(a["reservation"]), Limit: model.Resources{MilliCPU: inf, MemMB: inf, DiskMB: inf, GPU: inf}}
		if l, ok := a["limit"]; ok {
			limit := sc.resources(l)
			for _, part := range strings.Split(l, ",") {
				name, _, _ := strings.Cut(part, ":")
				k := slices.Index(model.ResourceKinds[:], name)
				p.Limit = p.Limit.Set(k, limit.Get(k))
			}
		}
		sc.pools = append(sc.pools, p)
	}
	return "ok"
}

// addLimits adds limits, an unlimited one making the sum unlimited.
func addLimits(a, b model.Resources) model.Resources {
	sum := a.Add(b)
	for k := range model.ResourceKinds {
		if a.Get(k) == model.Unlimited || b.Get(k) == model.Unlimited {
			sum = sum.Set(k, model.Unlimited)
		}
	}
	return sum
}

// format renders the resource kinds named so far: "cpu=85 mem=10".
func (sc *scenario) format(r model.Resources) string {
	var parts []string
	for k, name := range model.ResourceKinds {
		if sc.kinds[k] {
			parts = append(parts, name+"="+model.FormatAmount(k, r.Get(k)))
		}
	}
	return strings.Join(parts, " ")
}

func (sc *scenario) split(a map[string]string) string {
	var maxAge time.Duration
	if s, ok := a["max-age"]; ok {
		maxAge = sc.duration(s)
	}
	sc.shares = SplitPools(sc.pools, sc.regions, sc.at(a["now"]), maxAge)
	var b strings.Builder
	totals := map[string]RegionShare{}
	for _, region := range slices.Sorted(maps.Keys(sc.shares)) {
		for _, pool := range slices.Sorted(maps.Keys(sc.shares[region])) {
			s := sc.shares[region][pool]
			fmt.Fprintf(&b, "%s %s: reservation %s | limit %s\n", region, pool, sc.format(s.Reservation), sc.format(s.Limit))
			t := totals[pool]
			totals[pool] = RegionShare{Reservation: t.Reservation.Add(s.Reservation), Limit: addLimits(t.Limit, s.Limit)}
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(totals)) {
		fmt.Fprintf(&b, "total %s: reservation %s | limit %s\n", pool, sc.format(totals[pool].Reservation), sc.format(totals[pool].Limit))
	}
	if b.Len() == 0 {
		return "no shares"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (sc *scenario) setShares(input []string) string {
	sc.shares = Shares{}
	for _, line := range input {
		fields := strings.Fields(line)
		a := sc.args(fields[2:])
		if sc.shares[fields[0]] == nil {
			sc.shares[fields[0]] = map[string]RegionShare{}
		}
		sc.shares[fields[0]][fields[1]] = RegionShare{Reservation: sc.resources(a["reservation"]), Limit: sc.resources(a["limit"])}
	}
	return "ok"
}

func (sc *scenario) route(a map[string]string, input []string) string {
	req := JobRequest{
		Pool:      a["pool"],
		PerTask:   sc.resources(a["per-task"]),
		Instances: sc.uint(a["instances"]),
		Region:    a["region"],
		Allowed:   sc.list(a["allowed"]),
	}
	for _, line := range input {
		req.Constraints = append(req.Constraints, sc.constraint(line))
	}
	choice, err := ChooseRegion(req, sc.regions, sc.shares)
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	} else {
		fmt.Fprintf(&b, "region %s\n", choice.Region)
	}
	for _, r := range choice.Reasons {
		b.WriteString("  " + r + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (sc *scenario) startHealth(a map[string]string) string {
	cfg := HealthConfig{SuspectAfter: sc.duration(a["suspect"]), FailAfter: sc.duration(a["fail"]), RecoverAfter: sc.duration(a["recover"])}
	tracker, err := NewHealthTracker(cfg)
	if err != nil {
		return "error: " + err.Error()
	}
	sc.tracker = tracker
	return "ok"
}

func (sc *scenario) observe(input []string) string {
	if sc.tracker == nil {
		sc.fatalf("observe before health")
	}
	var b strings.Builder
	for _, line := range input {
		fields := strings.Fields(line)
		now := sc.at(fields[0])
		var ts []Transition
		switch {
		case len(fields) == 2 && fields[1] == "tick":
			ts = sc.tracker.Tick(now)
		case len(fields) == 3 && fields[1] == "fence":
			ts = sc.tracker.Fence(fields[2], now)
		case len(fields) == 3 && fields[1] == "unfence":
			ts = sc.tracker.Unfence(fields[2], now)
		case len(fields) == 4 && fields[1] == "unreachable-since":
			sc.tracker.Unreachable(fields[2], sc.at(fields[3]))
		case len(fields) == 3:
			r, m, ok := strings.Cut(fields[2], "/")
			reachable, err1 := strconv.Atoi(r)
			members, err2 := strconv.Atoi(m)
			if !ok || err1 != nil || err2 != nil {
				sc.fatalf("want reachable/members, got %q", fields[2])
			}
			ts = sc.tracker.Observe(fields[1], reachable, members, now)
		default:
			sc.fatalf("bad event %q", line)
		}
		for _, tr := range ts {
			fmt.Fprintf(&b, "%s %s\n", tr.At.Sub(epoch), tr)
		}
	}
	var states []string
	for _, st := range sc.tracker.Regions() {
		s := st.Region + "=" + st.Health.String()
		if st.Fenced {
			s += "(fenced)"
		}
		states = append(states, s)
	}
	b.WriteString("state: " + strings.Join(states, " "))
	return b.String()
}

func (sc *scenario) setJobs(input []string) string {
	sc.jobs = map[string][]RelocatableJob{}
	for _, line := range input {
		fields := strings.Fields(line)
		a := sc.args(fields[1:])
		j := RelocatableJob{
			ID:        fields[0],
			Pool:      a["pool"],
			PerTask:   sc.resources(a["per-task"]),
			Remaining: sc.uint(a["remaining"]),
			Targets:   sc.list(a["targets"]),
		}
		if c := a["c"]; c != "" {
			for _, part := range strings.Split(c, ";") {
				j.Constraints = append(j.Constraints, sc.constraint(part))
			}
		}
		sc.jobs[a["region"]] = append(sc.jobs[a["region"]], j)
	}
	return "ok"
}

func (sc *scenario) allJobs(region string) []RelocatableJob { return sc.jobs[region] }

func formatPlan(p Plan, indent string) string {
	var lines []string
	for _, m := range p.Moves {
		lines = append(lines, fmt.Sprintf("%smove %s -> %s (%s)", indent, m.Job, m.To, formatResources(m.Needs)))
	}
	for _, u := range p.Unplaced {
		lines = append(lines, fmt.Sprintf("%sunplaced %s: %s", indent, u.Job, u.Reason))
	}
	if len(lines) == 0 {
		return indent + "nothing to move"
	}
	return strings.Join(lines, "\n")
}

func (sc *scenario) planAll() string {
	plans := PlanAll(sc.jobs, sc.regions, sc.pools)
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(plans)) {
		b.WriteString(name + ":\n" + formatPlan(plans[name], "  ") + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
