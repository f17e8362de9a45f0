package sla

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
)

// The scenario files of testdata ask the SLA about one job each. A case:
//
//	job [limit=B] [gang=G]  a job with SLA budget B (a count or a
//	                        percentage of its instances; default the
//	                        service default) in gangs of G (default 1);
//	job batch               a job without an SLA (a nil Job).
//
// Input lines, instances first, then questions asked in order of one
// copy of the job (Clone), each answered on an output line:
//
//	instance I[-J] STATE [ready=H] [health=H] [disrupted]
//	                        STATE a task state (running, pending, ...),
//	                        H healthy, unhealthy or unknown; whether it
//	                        is available is Available's answer
//	disrupt gang N [size=S] Disrupt of gang N (S members, default the
//	                        gang size, fewer for a last short gang)
//	disrupt I [J ...]       Disrupt of these instances, as one gang
//	ask I [J ...]           Ask: which may go, changing nothing
//	take I [J ...]          Take: counted as disrupted without asking
//	room                    Room: how many more may go down (preemption)
//
// The first output line gives the job's limit and instances; asking the
// copy must leave the job alone. Run with -rewrite to regenerate the
// expected output after a deliberate change, then review the diff.
func TestSLAScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		return func(c datadriven.Case) string {
			out, err := runJob(c)
			if err != nil {
				t.Fatalf("%s: %v", c.Where, err)
			}
			return out
		}
	})
}

// scenario is one case's job and its questions.
type scenario struct {
	batch     bool
	budget    Budget
	gang      uint32
	instances []Instance
	questions [][]string
}

func runJob(c datadriven.Case) (string, error) {
	f := c.Fields()
	if f[0] != "job" {
		return "", fmt.Errorf("unknown command %q", f[0])
	}
	s := scenario{budget: DefaultServiceBudget, gang: 1}
	for _, o := range f[1:] {
		if err := s.option(o); err != nil {
			return "", fmt.Errorf("job option %q: %w", o, err)
		}
	}
	for _, line := range c.Input {
		if err := s.read(strings.Fields(line)); err != nil {
			return "", fmt.Errorf("%q: %w", line, err)
		}
	}
	var job *Job
	if !s.batch {
		job = &Job{Limit: s.budget.Limit(uint32(len(s.instances))), Instances: s.instances}
	}
	orig := job.Clone()
	lines := []string{s.header(job)}
	asked := job.Clone()
	for _, q := range s.questions {
		line, err := s.answer(asked, q)
		if err != nil {
			return "", fmt.Errorf("%q: %w", strings.Join(q, " "), err)
		}
		lines = append(lines, line)
	}
	if !reflect.DeepEqual(orig, job) {
		return "", fmt.Errorf("asking a copy changed the job")
	}
	return strings.Join(lines, "\n"), nil
}

func (s *scenario) option(o string) error {
	if o == "batch" {
		s.batch = true
		return nil
	}
	k, v, _ := strings.Cut(o, "=")
	var err error
	switch k {
	case "limit":
		s.budget, err = ParseBudget(v)
	case "gang":
		var n uint64
		n, err = strconv.ParseUint(v, 10, 32)
		s.gang = uint32(n)
	default:
		return fmt.Errorf("unknown option")
	}
	return err
}

// read takes an instance line, or keeps a question for later.
func (s *scenario) read(f []string) error {
	if len(f) == 0 {
		return fmt.Errorf("empty line")
	}
	switch f[0] {
	case "instance":
		return s.instance(f[1:])
	case "disrupt", "ask", "take":
		if len(f) < 2 {
			return fmt.Errorf("%s needs instances or a gang", f[0])
		}
	case "room":
		if len(f) != 1 {
			return fmt.Errorf("room takes nothing")
		}
	default:
		return fmt.Errorf("unknown line kind %q", f[0])
	}
	s.questions = append(s.questions, f)
	return nil
}

// instance reads "I[-J] STATE [ready=H] [health=H] [disrupted]".
func (s *scenario) instance(f []string) error {
	if len(f) < 2 {
		return fmt.Errorf("want instance I[-J] STATE ...")
	}
	lo, hi, err := idRange(f[0])
	if err != nil {
		return err
	}
	state, ok := model.ParseTaskState(strings.ToUpper(f[1]))
	if !ok {
		return fmt.Errorf("unknown task state %q", f[1])
	}
	rt := model.TaskRuntime{State: state}
	disrupted := false
	for _, w := range f[2:] {
		if w == "disrupted" {
			disrupted = true
			continue
		}
		if err := probe(&rt, w); err != nil {
			return err
		}
	}
	for id := lo; id <= hi; id++ {
		s.instances = append(s.instances, Instance{ID: id, Available: Available(&rt), Disrupted: disrupted})
	}
	return nil
}

var healthWords = map[string]model.HealthState{"healthy": model.HealthHealthy, "unhealthy": model.HealthUnhealthy, "unknown": model.HealthUnknown}

// probe reads ready=H or health=H into rt.
func probe(rt *model.TaskRuntime, w string) error {
	k, v, _ := strings.Cut(w, "=")
	h, ok := healthWords[v]
	switch {
	case !ok:
		return fmt.Errorf("%q: want healthy, unhealthy or unknown", w)
	case k == "ready":
		rt.Ready = h
	case k == "health":
		rt.Health = h
	default:
		return fmt.Errorf("unknown word %q", w)
	}
	return nil
}

func idRange(s string) (lo, hi uint32, err error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err = parseID(a)
	if err != nil || !isRange {
		return lo, lo, err
	}
	hi, err = parseID(b)
	if err == nil && hi < lo {
		err = fmt.Errorf("range %q runs backwards", s)
	}
	return lo, hi, err
}

func parseID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("instance %q: %w", s, err)
	}
	return uint32(n), nil
}

func parseIDs(f []string) ([]uint32, error) {
	ids := make([]uint32, len(f))
	for i, w := range f {
		id, err := parseID(w)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

func (s *scenario) header(job *Job) string {
	if job == nil {
		return "job: no SLA"
	}
	avail := 0
	for _, in := range job.Instances {
		if in.Available {
			avail++
		}
	}
	return fmt.Sprintf("job: limit %d (%s of %d), %d available", job.Limit, s.budget, len(job.Instances), avail)
}

// answer asks question q of job and says the answer.
func (s *scenario) answer(job *Job, q []string) (string, error) {
	if q[0] == "room" {
		if job == nil {
			return "room: no limit", nil
		}
		return fmt.Sprintf("room %d", job.Room()), nil
	}
	ids, label, err := s.targets(q)
	if err != nil {
		return "", err
	}
	switch q[0] {
	case "ask":
		if job == nil {
			return fmt.Sprintf("ask %v: no limit", ids), nil
		}
		d := job.Ask(ids)
		return strings.TrimSpace(fmt.Sprintf("ask %v: allowed %v held %v %s", ids, d.Allowed, d.Held, d.Reason())), nil
	case "take":
		if job != nil {
			job.Take(ids)
		}
		return fmt.Sprintf("take %v", ids), nil
	}
	if ok, why := job.Disrupt(ids); !ok {
		return fmt.Sprintf("disrupt %s: no, %s", label, why), nil
	}
	return fmt.Sprintf("disrupt %s: yes", label), nil
}

// targets reads the instances a question is about: "gang N [size=S]" or
// a list of ids.
func (s *scenario) targets(q []string) ([]uint32, string, error) {
	if q[1] != "gang" {
		ids, err := parseIDs(q[1:])
		return ids, fmt.Sprint(ids), err
	}
	if q[0] != "disrupt" || len(q) < 3 || len(q) > 4 {
		return nil, "", fmt.Errorf("want disrupt gang N [size=S]")
	}
	n, err := parseID(q[2])
	if err != nil {
		return nil, "", err
	}
	size := s.gang
	if first := n * max(s.gang, 1); first+size > uint32(len(s.instances)) && first < uint32(len(s.instances)) {
		size = uint32(len(s.instances)) - first
	}
	if len(q) == 4 {
		v, ok := strings.CutPrefix(q[3], "size=")
		if size, err = parseID(v); !ok || err != nil {
			return nil, "", fmt.Errorf("want size=S")
		}
	}
	ids := Gang(s.gang, n, size)
	return ids, fmt.Sprintf("gang %d %v", n, ids), nil
}
