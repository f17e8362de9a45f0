package migration

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/sla"
)

// The scenario files of testdata run one migration step each. A case:
//
//	step [batch=N] [surge] [restart] [settle-on-place] [paused]
//	     [max-failures=N] [stall-after=D] [gang-size=N]
//	     [limit=L [instances=N] [down=I,J]]
//	                  Step over the gangs of the input lines, in order:
//	gang N [size=S] PLACE [pinned|restarted] [available] [restarting]
//	     [surge=starting|available|stopping] [failures=N] [pending=D]
//	     [why=TEXT...]
//	                  PLACE is target, elsewhere, unplaced, partly or
//	                  finished; why= takes the rest of the line.
//
// With limit=L the step has an SLA: the job's instances (N, default those
// of the gangs), at most L unavailable; an instance is available unless
// its gang is not available or it is listed in down. Output: each gang's
// phase, the plan's lists and counts, then why it waits or is stuck, and
// whether the job is complete. Run with -rewrite to regenerate the
// expected output after a deliberate change, then review the diff.
func TestStepScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		return func(c datadriven.Case) string {
			out, err := runStep(c)
			if err != nil {
				t.Fatalf("%s: %v", c.Where, err)
			}
			return out
		}
	})
}

// stepCase is a case's step options before the gangs are known.
type stepCase struct {
	in        Input
	hasLimit  bool
	limit     uint32
	instances uint32
	down      []uint32
}

func runStep(c datadriven.Case) (string, error) {
	f := c.Fields()
	if f[0] != "step" {
		return "", fmt.Errorf("unknown command %q", f[0])
	}
	var sc stepCase
	for _, o := range f[1:] {
		if err := sc.option(o); err != nil {
			return "", fmt.Errorf("step option %q: %w", o, err)
		}
	}
	for _, line := range c.Input {
		g, err := parseGang(line)
		if err != nil {
			return "", fmt.Errorf("%q: %w", line, err)
		}
		sc.in.Gangs = append(sc.in.Gangs, g)
	}
	sc.in.SLA = sc.slaJob()
	before := sc.in.SLA.Clone()
	plan := Step(sc.in)
	if !reflect.DeepEqual(before, sc.in.SLA) {
		return "", fmt.Errorf("the step changed the SLA it was given")
	}
	return phases(sc.in) + "\n" + formatPlan(plan), nil
}

func (sc *stepCase) option(o string) error {
	k, v, hasValue := strings.Cut(o, "=")
	flags := map[string]*bool{"surge": &sc.in.Surge, "restart": &sc.in.Restart,
		"settle-on-place": &sc.in.SettleOnPlace, "paused": &sc.in.Paused}
	if p, ok := flags[k]; ok && !hasValue {
		*p = true
		return nil
	}
	counts := map[string]*uint32{"batch": &sc.in.Batch, "max-failures": &sc.in.MaxFailures,
		"gang-size": &sc.in.GangSize, "limit": &sc.limit, "instances": &sc.instances}
	var err error
	switch p, ok := counts[k]; {
	case ok && hasValue:
		*p, err = count(v)
		sc.hasLimit = sc.hasLimit || k == "limit"
	case k == "stall-after" && hasValue:
		sc.in.StallAfter, err = time.ParseDuration(v)
	case k == "down" && hasValue:
		sc.down, err = countList(v)
	default:
		return fmt.Errorf("unknown option")
	}
	return err
}

func count(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err
}

func countList(s string) ([]uint32, error) {
	var out []uint32
	for _, part := range strings.Split(s, ",") {
		n, err := count(part)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// slaJob is the case's SLA, nil without limit=.
func (sc *stepCase) slaJob() *sla.Job {
	if !sc.hasLimit {
		return nil
	}
	down := map[uint32]bool{}
	for _, id := range sc.down {
		down[id] = true
	}
	n := sc.instances
	for _, g := range sc.in.Gangs {
		for _, id := range sla.Gang(sc.in.GangSize, g.Gang, g.Size) {
			down[id] = down[id] || !g.Available
			if sc.instances == 0 {
				n = max(n, id+1)
			}
		}
	}
	job := &sla.Job{Limit: sc.limit}
	for id := range n {
		job.Instances = append(job.Instances, sla.Instance{ID: id, Available: !down[id]})
	}
	return job
}

var (
	placeWords = map[string]GangPlace{"target": PlacedOnTarget, "elsewhere": PlacedElsewhere,
		"unplaced": Unplaced, "partly": PlacedPartly, "finished": Finished}
	moveWords  = map[string]GangMove{"pinned": Pinned, "restarted": Restarted}
	surgeWords = map[string]SurgeState{"starting": SurgeStarting, "available": SurgeAvailable, "stopping": SurgeStopping}
	phaseNames = [...]string{PhaseDone: "done", PhaseArrived: "arrived", PhaseMoving: "moving", PhaseFinishing: "finishing",
		PhaseSurgeReady: "surge-ready", PhaseSurging: "surging", PhaseToMove: "to-move", PhaseToPin: "to-pin"}
)

// parseGang reads "gang N [size=S] PLACE ...".
func parseGang(line string) (Gang, error) {
	words := strings.Fields(line)
	if len(words) < 3 || words[0] != "gang" {
		return Gang{}, fmt.Errorf("want gang N [size=S] PLACE ...")
	}
	n, err := count(words[1])
	if err != nil {
		return Gang{}, fmt.Errorf("gang number: %w", err)
	}
	g := Gang{Gang: n, Size: 1}
	placed := false
	for i, w := range words[2:] {
		if why, ok := strings.CutPrefix(w, "why="); ok {
			g.Why = strings.Join(append([]string{why}, words[3+i:]...), " ")
			break
		}
		if p, ok := placeWords[w]; ok && !placed {
			g.Place, placed = p, true
			continue
		}
		if err := gangWord(&g, w); err != nil {
			return g, err
		}
	}
	if !placed {
		return g, fmt.Errorf("no place (target, elsewhere, unplaced, partly, finished)")
	}
	return g, nil
}

// gangWord reads one word of a gang line besides its place and why.
func gangWord(g *Gang, w string) error {
	k, v, _ := strings.Cut(w, "=")
	var err error
	switch m, isMove := moveWords[w]; {
	case isMove:
		g.Move = m
	case w == "available":
		g.Available = true
	case w == "restarting":
		g.Restarting = true
	case k == "surge":
		s, ok := surgeWords[v]
		if !ok {
			return fmt.Errorf("%q: want surge=starting|available|stopping", w)
		}
		g.Surge = s
	case k == "size":
		g.Size, err = count(v)
	case k == "failures":
		g.Failures, err = count(v)
	case k == "pending":
		g.PendingFor, err = time.ParseDuration(v)
	default:
		return fmt.Errorf("unknown word %q", w)
	}
	if err != nil {
		return fmt.Errorf("%q: %w", w, err)
	}
	return nil
}

// phases is each gang's phase as Step derives it.
func phases(in Input) string {
	parts := make([]string, len(in.Gangs))
	for i, g := range in.Gangs {
		parts[i] = fmt.Sprintf("%d:%s", g.Gang, phaseNames[phaseOf(in, g)])
	}
	return "phases: " + strings.Join(parts, " ")
}

func formatPlan(p Plan) string {
	var lines []string
	for _, l := range []struct {
		name  string
		gangs []uint32
	}{{"pin", p.Pin}, {"start-surge", p.StartSurge}, {"restart", p.Restart}, {"drop-surge", p.DropSurge}, {"moved", p.Moved}} {
		if len(l.gangs) > 0 {
			lines = append(lines, fmt.Sprintf("%s %v", l.name, l.gangs))
		}
	}
	lines = append(lines, fmt.Sprintf("total=%d done=%d in-flight=%d finishing=%d", p.Total, p.Done, p.InFlight, p.Finishing))
	if p.Waiting != "" {
		lines = append(lines, "waiting: "+p.Waiting)
	}
	if p.Stuck != "" {
		lines = append(lines, "stuck: "+p.Stuck)
	}
	if p.Complete {
		lines = append(lines, "complete")
	}
	return strings.Join(lines, "\n")
}
