package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
)

// Sentinel errors of the harness.
var (
	// ErrInvalidScenario reports a scenario file that cannot be run; the
	// wrapped message names the file and the field.
	ErrInvalidScenario = errors.New("invalid scenario")
	// ErrUnknownScenario reports a scenario or size name that no file has.
	ErrUnknownScenario = errors.New("unknown scenario")
)

// Size names every scenario file must define.
const (
	SizeFull  = "full"
	SizeSmall = "small"
)

// Scenario is one benchmark scenario as written in its YAML file.
type Scenario struct {
	Name  string `json:"name"`
	About string `json:"about"`
	Seed  uint64 `json:"seed"`
	// Sizes holds the "full" size (make bench) and the "small" size (the
	// go test run in CI), and any others.
	Sizes   map[string]Size `json:"sizes"`
	Hosts   HostMix         `json:"hosts"`
	Jobs    []JobGroup      `json:"jobs"`
	Arrival Arrival         `json:"arrival"`
	// API, when set, makes the scenario drive a real peloton process
	// through its public API instead of the placement core and an
	// in-process shard (api.go).
	API *APIMode `json:"api"`
}

// APIMode is how an API scenario calls the server.
type APIMode struct {
	// Call is "batch" (CreateJobs over gRPC, BatchSize specs per request,
	// the size's clients sending requests side by side) or "single"
	// (CreateJob over HTTP/JSON, one job per request, from the size's
	// clients for its duration).
	Call      string `json:"call"`
	BatchSize int    `json:"batchSize"`
	// Target is the figure the scenario must reach: jobs placed per second
	// (batch) or jobs created per second (single), and for single a p99
	// bound on a create.
	Target APITarget `json:"target"`
}

// APITarget is what an API scenario must reach.
type APITarget struct {
	PerSecond float64  `json:"perSecond"`
	P99       Duration `json:"p99"`
}

// Size is how big one run of a scenario is, and how long its end-to-end
// parts may take.
type Size struct {
	Hosts int `json:"hosts"`
	// Jobs is the number of jobs over all groups; a distinct group's jobs
	// have one task each.
	Jobs        int `json:"jobs"`
	TasksPerJob int `json:"tasksPerJob"`
	// NaiveTasks is how many tasks the exhaustive baseline places (it scans
	// every host per task, so it runs on a prefix); zero means all.
	NaiveTasks int `json:"naiveTasks"`
	// EndToEndBudget bounds the end-to-end run through the shard; zero
	// skips it.
	EndToEndBudget Duration `json:"endToEndBudget"`
	// MemoryBudget bounds the pending-memory run; zero skips it.
	MemoryBudget Duration `json:"memoryBudget"`
	// StoreCeilingTasks caps how many task records the store ceiling
	// writes; zero means as many as the scenario has tasks.
	StoreCeilingTasks int `json:"storeCeilingTasks"`
	// JobsPerSecond overrides Arrival.JobsPerSecond at this size.
	JobsPerSecond float64 `json:"jobsPerSecond"`
	// DurationScale multiplies every group's run duration (default 1).
	DurationScale float64 `json:"durationScale"`
	// Clients call the API side by side (API scenarios); APIDuration is how
	// long single creates are sent, and APIBudget bounds a batch run from
	// the first request to the last task running.
	Clients     int      `json:"clients"`
	APIDuration Duration `json:"apiDuration"`
	APIBudget   Duration `json:"apiBudget"`
}

// HostMix describes the cluster: host shapes and labels.
type HostMix struct {
	// Shapes are dealt to hosts in a repeating pattern by weight: with
	// weights 19 and 1, every twentieth host has the second shape.
	Shapes []HostShape `json:"shapes"`
	// Labels are cycled over hosts: host i gets values[i % len(values)].
	Labels map[string][]string `json:"labels"`
	// Blocks label consecutive hosts in blocks: host i gets
	// Prefix + i/Size under Key (racks of 40 hosts, for example).
	Blocks []LabelBlock `json:"blocks"`
}

// HostShape is the capacity (and extra labels) of a kind of host.
type HostShape struct {
	Weight int               `json:"weight"`
	CPU    float64           `json:"cpu"`
	MemMB  float64           `json:"memMB"`
	DiskMB float64           `json:"diskMB"`
	GPU    float64           `json:"gpu"`
	Labels map[string]string `json:"labels"`
}

// LabelBlock labels hosts in blocks of Size.
type LabelBlock struct {
	Key    string `json:"key"`
	Size   int    `json:"size"`
	Prefix string `json:"prefix"`
}

// JobGroup is one kind of job in the mix.
type JobGroup struct {
	Name string `json:"name"`
	// Weight is the group's share of the jobs: jobs are dealt to groups in a
	// repeating pattern by weight.
	Weight int `json:"weight"`
	// Distinct makes every job of the group a single task with its own
	// resource draw, so no two tasks share an equivalence class.
	Distinct bool    `json:"distinct"`
	CPU      Amount  `json:"cpu"`
	MemMB    Amount  `json:"memMB"`
	DiskMB   Amount  `json:"diskMB"`
	GPU      Amount  `json:"gpu"`
	Priority []int32 `json:"priority"`
	// Constraints holds the constraint sets a job draws one from; an empty
	// set means no constraint.
	Constraints [][]ConstraintSpec `json:"constraints"`
	MaxPerHost  int                `json:"maxPerHost"`
	Spread      []SpreadSpec       `json:"spread"`
	GangSize    int                `json:"gangSize"`
	// Strategy is "pack" (batch) or "spread" (services); empty is pack.
	Strategy string `json:"strategy"`
	// Duration is how long each run lasts on the sim host manager; zero
	// means the run outlasts the benchmark.
	Duration Duration `json:"duration"`
}

// SpreadSpec limits a job's tasks per value of a host label: at most Max,
// or, when Max is zero, Fraction of the job's tasks (rounded up).
type SpreadSpec struct {
	Key      string  `json:"key"`
	Max      int     `json:"max"`
	Fraction float64 `json:"fraction"`
}

// ConstraintSpec is a model.Constraint as written in YAML, with the
// operator by name ("==", "!=", "in", "not-in", "exists", "not-exists").
type ConstraintSpec struct {
	Key    string           `json:"key"`
	Op     string           `json:"op"`
	Values []string         `json:"values"`
	AllOf  []ConstraintSpec `json:"allOf"`
	AnyOf  []ConstraintSpec `json:"anyOf"`
}

// Arrival is when jobs are submitted.
type Arrival struct {
	// Pattern is "burst" (every job at once) or "steady" (JobsPerSecond).
	Pattern       string  `json:"pattern"`
	JobsPerSecond float64 `json:"jobsPerSecond"`
	// RoundSeconds is the length of one placement pass of the core churn
	// loop on the arrival clock (default 1).
	RoundSeconds float64 `json:"roundSeconds"`
}

// Amount is a resource amount: a number, a list of choices drawn from, or
// a range {min, max} drawn uniformly.
type Amount struct {
	Choices []float64
	Min     float64
	Max     float64
	Ranged  bool
}

// UnmarshalJSON accepts 2, [0.5, 1, 2] and {min: 0.1, max: 2}.
func (a *Amount) UnmarshalJSON(b []byte) error {
	var one float64
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Amount{Choices: []float64{one}}
		return nil
	}
	var many []float64
	if err := json.Unmarshal(b, &many); err == nil {
		*a = Amount{Choices: many}
		return nil
	}
	var r struct {
		Min *float64 `json:"min"`
		Max *float64 `json:"max"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.Min == nil || r.Max == nil {
		return fmt.Errorf("an amount is a number, a list of numbers or {min, max}, not %s", b)
	}
	*a = Amount{Min: *r.Min, Max: *r.Max, Ranged: true}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Ranged {
		return json.Marshal(map[string]float64{"min": a.Min, "max": a.Max})
	}
	return json.Marshal(a.Choices)
}

func (a Amount) validate() string {
	if a.Ranged {
		if a.Min < 0 || a.Max < a.Min {
			return fmt.Sprintf("range [%v, %v] must have 0 <= min <= max", a.Min, a.Max)
		}
		return ""
	}
	for _, c := range a.Choices {
		if c < 0 || c != c {
			return fmt.Sprintf("choice %v must be a non-negative number", c)
		}
	}
	return ""
}

// Duration is a time.Duration written as text ("90s", "2m").
type Duration time.Duration

// UnmarshalJSON parses "90s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is text such as \"90s\", not %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("duration %q: must be a non-negative Go duration such as \"90s\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the text form.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Parse reads and checks one scenario file.
func Parse(name string, data []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrInvalidScenario, err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// LoadDir reads every *.yaml scenario in dir of fsys, sorted by name;
// names must be unique.
func LoadDir(fsys fs.FS, dir string) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	seen := map[string]string{}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		s, err := Parse(n, data)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[s.Name]; dup {
			return nil, fmt.Errorf("%s: %w: name %q is also used by %s", n, ErrInvalidScenario, s.Name, other)
		}
		seen[s.Name] = n
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no *.yaml files in %s", ErrUnknownScenario, dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidScenario, field, fmt.Sprintf(format, args...))
}

func (s *Scenario) validate() error {
	if s.Name == "" || strings.ContainsAny(s.Name, " \t/") {
		return invalid("name", "must be non-empty, without spaces or '/'")
	}
	if err := s.validateSizes(); err != nil {
		return err
	}
	if err := s.Hosts.validate(); err != nil {
		return err
	}
	if len(s.Jobs) == 0 {
		return invalid("jobs", "at least one job group is required")
	}
	for i := range s.Jobs {
		if err := s.Jobs[i].validate(fmt.Sprintf("jobs[%d]", i)); err != nil {
			return err
		}
	}
	if s.API != nil {
		if err := s.validateAPI(); err != nil {
			return err
		}
	}
	return s.Arrival.validate()
}

// validateSizes checks that both sizes are there and each is whole.
func (s *Scenario) validateSizes() error {
	for _, want := range []string{SizeFull, SizeSmall} {
		if _, ok := s.Sizes[want]; !ok {
			return invalid("sizes."+want, "is required")
		}
	}
	allDistinct := len(s.Jobs) > 0
	for _, g := range s.Jobs {
		allDistinct = allDistinct && g.Distinct
	}
	for name, z := range s.Sizes {
		f := "sizes." + name
		switch {
		case z.Hosts <= 0:
			return invalid(f+".hosts", "must be positive")
		case z.Jobs <= 0:
			return invalid(f+".jobs", "must be positive")
		case z.TasksPerJob <= 0 && !allDistinct:
			return invalid(f+".tasksPerJob", "must be positive")
		case z.NaiveTasks < 0 || z.StoreCeilingTasks < 0:
			return invalid(f, "naiveTasks and storeCeilingTasks must not be negative")
		case z.JobsPerSecond < 0 || z.DurationScale < 0:
			return invalid(f, "jobsPerSecond and durationScale must not be negative")
		}
	}
	return nil
}

// validate checks the hosts' shapes, labels and blocks.
func (h *HostMix) validate() error {
	if len(h.Shapes) == 0 {
		return invalid("hosts.shapes", "at least one shape is required")
	}
	for i, sh := range h.Shapes {
		if sh.Weight < 0 || sh.CPU < 0 || sh.MemMB < 0 || sh.DiskMB < 0 || sh.GPU < 0 {
			return invalid(fmt.Sprintf("hosts.shapes[%d]", i), "weight and capacities must not be negative")
		}
	}
	for k, vs := range h.Labels {
		if k == "" || len(vs) == 0 {
			return invalid("hosts.labels."+k, "needs a key and at least one value")
		}
	}
	for i, b := range h.Blocks {
		if b.Key == "" || b.Size <= 0 {
			return invalid(fmt.Sprintf("hosts.blocks[%d]", i), "needs a key and a positive size")
		}
	}
	return nil
}

// validate checks the arrival pattern.
func (a *Arrival) validate() error {
	switch a.Pattern {
	case "", "burst":
	case "steady":
		if a.JobsPerSecond <= 0 {
			return invalid("arrival.jobsPerSecond", "must be positive for a steady arrival")
		}
	default:
		return invalid("arrival.pattern", "%q is not burst or steady", a.Pattern)
	}
	if a.RoundSeconds < 0 {
		return invalid("arrival.roundSeconds", "must not be negative")
	}
	return nil
}

// validateAPI checks an API scenario: its call, its sizes, and hosts the
// dev server's sim host manager can make (one shape, zone labels only).
func (s *Scenario) validateAPI() error {
	a := s.API
	switch a.Call {
	case "batch":
		if a.BatchSize <= 0 {
			return invalid("api.batchSize", "must be positive for batch calls")
		}
	case "single":
	default:
		return invalid("api.call", "%q is not batch or single", a.Call)
	}
	if a.Target.PerSecond < 0 || a.Target.P99 < 0 {
		return invalid("api.target", "must not be negative")
	}
	for name, z := range s.Sizes {
		f := "sizes." + name
		switch {
		case z.Clients <= 0:
			return invalid(f+".clients", "must be positive for an API scenario")
		case a.Call == "single" && z.APIDuration <= 0:
			return invalid(f+".apiDuration", "must be positive for single calls")
		case a.Call == "batch" && z.APIBudget <= 0:
			return invalid(f+".apiBudget", "must be positive for batch calls")
		}
	}
	if len(s.Hosts.Shapes) != 1 || len(s.Hosts.Shapes[0].Labels) > 0 || s.Hosts.Shapes[0].GPU > 0 || len(s.Hosts.Blocks) > 0 {
		return invalid("hosts", "an API scenario runs on the dev server's sim hosts: one shape, no GPU, no blocks or shape labels")
	}
	for k := range s.Hosts.Labels {
		if k != "zone" {
			return invalid("hosts.labels."+k, "the dev server's sim hosts carry zone labels only")
		}
	}
	for i, g := range s.Jobs {
		if g.GangSize > 1 || len(g.Spread) > 0 || g.MaxPerHost > 0 {
			return invalid(fmt.Sprintf("jobs[%d]", i), "an API scenario's jobs have no gangs, spread or per-host limits")
		}
	}
	return nil
}

func (g *JobGroup) validate(f string) error {
	if g.Weight < 0 {
		return invalid(f+".weight", "must not be negative")
	}
	for name, a := range map[string]Amount{"cpu": g.CPU, "memMB": g.MemMB, "diskMB": g.DiskMB, "gpu": g.GPU} {
		if msg := a.validate(); msg != "" {
			return invalid(f+"."+name, "%s", msg)
		}
	}
	if len(g.CPU.Choices) == 0 && !g.CPU.Ranged {
		return invalid(f+".cpu", "is required")
	}
	if g.MaxPerHost < 0 || g.GangSize < 0 {
		return invalid(f, "maxPerHost and gangSize must not be negative")
	}
	if _, ok := placement.ParseStrategy(g.Strategy); !ok && g.Strategy != "" {
		return invalid(f+".strategy", "%q is not pack or spread", g.Strategy)
	}
	for i, sp := range g.Spread {
		if sp.Key == "" || sp.Max < 0 || sp.Fraction < 0 || (sp.Max == 0 && sp.Fraction == 0) {
			return invalid(fmt.Sprintf("%s.spread[%d]", f, i), "needs a key and a positive max or fraction")
		}
	}
	for i, set := range g.Constraints {
		for j := range set {
			if _, err := set[j].model(fmt.Sprintf("%s.constraints[%d][%d]", f, i, j), 0); err != nil {
				return err
			}
		}
	}
	return nil
}

var opNames = func() map[string]model.ConstraintOp {
	m := map[string]model.ConstraintOp{}
	for op := model.OpEquals; op <= model.OpNotExists; op++ {
		m[op.String()] = op
	}
	return m
}()

// model converts the YAML form to the domain constraint.
func (c *ConstraintSpec) model(f string, depth int) (model.Constraint, error) {
	if depth > 8 {
		return model.Constraint{}, invalid(f, "nested too deeply")
	}
	var out model.Constraint
	for i := range c.AllOf {
		m, err := c.AllOf[i].model(fmt.Sprintf("%s.allOf[%d]", f, i), depth+1)
		if err != nil {
			return out, err
		}
		out.AllOf = append(out.AllOf, m)
	}
	for i := range c.AnyOf {
		m, err := c.AnyOf[i].model(fmt.Sprintf("%s.anyOf[%d]", f, i), depth+1)
		if err != nil {
			return out, err
		}
		out.AnyOf = append(out.AnyOf, m)
	}
	if len(out.AllOf) > 0 || len(out.AnyOf) > 0 {
		if c.Key != "" || c.Op != "" || len(out.AllOf) > 0 && len(out.AnyOf) > 0 {
			return out, invalid(f, "a composite holds allOf or anyOf only")
		}
		return out, nil
	}
	op, ok := opNames[c.Op]
	if !ok {
		names := make([]string, 0, len(opNames))
		for n := range opNames {
			names = append(names, n)
		}
		slices.Sort(names)
		return out, invalid(f+".op", "%q is not one of %s", c.Op, strings.Join(names, ", "))
	}
	if c.Key == "" {
		return out, invalid(f+".key", "is required")
	}
	out.Key, out.Op, out.Values = c.Key, op, c.Values
	return out, nil
}

// Names lists the scenarios' names.
func Names(ss []*Scenario) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// Find returns the scenario called name.
func Find(ss []*Scenario, name string) (*Scenario, error) {
	for _, s := range ss {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: %q (have %s)", ErrUnknownScenario, name, strings.Join(Names(ss), ", "))
}
