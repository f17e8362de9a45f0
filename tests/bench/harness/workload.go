package harness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
)

// Cluster is the name of the simulated cluster every workload runs on;
// host ids are "<Cluster>/<host name>".
const Cluster = "bench"

// JobTemplate is one job a workload submits: what each of its tasks needs,
// and when it arrives.
type JobTemplate struct {
	Name        string
	Group       string
	Instances   int
	Resources   model.Resources
	Constraints []model.Constraint
	Priority    int32
	MaxPerHost  int
	Spread      []placement.SpreadLimit
	GangSize    int
	Strategy    placement.Strategy
	// Duration is how long each run lasts; zero means it outlasts the run.
	Duration time.Duration
	// Arrival is when the job is submitted, from the start of the run.
	Arrival time.Duration
}

// Workload is a scenario built at one size: the hosts and the jobs.
type Workload struct {
	Scenario string
	Size     string
	About    string
	Seed     uint64
	Hosts    []sim.HostSpec
	Jobs     []JobTemplate
	// Tasks is the number of tasks over all jobs.
	Tasks             int
	NaiveTasks        int
	EndToEndBudget    time.Duration
	MemoryBudget      time.Duration
	StoreCeilingTasks int
	// Steady is true when jobs arrive over time (churn) rather than at once.
	Steady bool
	// Submitters is how many clients submit a burst at once; zero means
	// the harness's default (32).
	Submitters   int
	RoundSeconds float64

	byName map[model.JobID]int // job index by name, built on first use
}

// Build makes the workload of a scenario at the named size.
func (s *Scenario) Build(size string) (*Workload, error) {
	z, ok := s.Sizes[size]
	if !ok {
		return nil, fmt.Errorf("%w: scenario %s has no size %q", ErrUnknownScenario, s.Name, size)
	}
	w := &Workload{
		Scenario:          s.Name,
		Size:              size,
		About:             s.About,
		Seed:              s.Seed,
		NaiveTasks:        z.NaiveTasks,
		EndToEndBudget:    time.Duration(z.EndToEndBudget),
		MemoryBudget:      time.Duration(z.MemoryBudget),
		StoreCeilingTasks: z.StoreCeilingTasks,
		Steady:            s.Arrival.Pattern == "steady",
		RoundSeconds:      s.Arrival.RoundSeconds,
	}
	if w.RoundSeconds == 0 {
		w.RoundSeconds = 1
	}
	w.Hosts = buildHosts(&s.Hosts, z.Hosts)
	jobs, err := buildJobs(s, z)
	if err != nil {
		return nil, err
	}
	w.Jobs = jobs
	for i := range jobs {
		w.Tasks += jobs[i].Instances
	}
	return w, nil
}

// pattern deals items to weighted buckets in a repeating order: weights
// 2 and 1 give 0, 0, 1, 0, 0, 1, ...; a zero weight counts as one.
func pattern(weights []int) []int {
	var out []int
	for i, w := range weights {
		for range max(w, 1) {
			out = append(out, i)
		}
	}
	return out
}

func buildHosts(m *HostMix, n int) []sim.HostSpec {
	weights := make([]int, len(m.Shapes))
	for i, s := range m.Shapes {
		weights[i] = s.Weight
	}
	deal := pattern(weights)
	keys := make([]string, 0, len(m.Labels))
	for k := range m.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	width := len(strconv.Itoa(max(n-1, 0)))
	hosts := make([]sim.HostSpec, n)
	for i := range hosts {
		shape := &m.Shapes[deal[i%len(deal)]]
		labels := make(map[string]string, len(keys)+len(m.Blocks)+len(shape.Labels))
		for _, k := range keys {
			vs := m.Labels[k]
			labels[k] = vs[i%len(vs)]
		}
		for _, b := range m.Blocks {
			labels[b.Key] = b.Prefix + strconv.Itoa(i/b.Size)
		}
		for k, v := range shape.Labels {
			labels[k] = v
		}
		hosts[i] = sim.HostSpec{
			Name:     fmt.Sprintf("host-%0*d", width, i),
			Capacity: model.ResourcesFromDecimal(shape.CPU, shape.MemMB, shape.DiskMB, shape.GPU),
			Labels:   labels,
		}
	}
	return hosts
}

// draw picks an amount: a choice, or a uniform value in the range rounded
// to a thousandth.
func draw(r *rand.Rand, a Amount) float64 {
	if a.Ranged {
		return math.Round((a.Min+r.Float64()*(a.Max-a.Min))*1000) / 1000
	}
	if len(a.Choices) == 0 {
		return 0
	}
	return a.Choices[r.IntN(len(a.Choices))]
}

func buildJobs(s *Scenario, z Size) ([]JobTemplate, error) {
	r := rand.New(rand.NewPCG(s.Seed, 0x6a6f6273))
	weights := make([]int, len(s.Jobs))
	constraintSets := make([][][]model.Constraint, len(s.Jobs))
	for i := range s.Jobs {
		g := &s.Jobs[i]
		weights[i] = g.Weight
		for k, set := range g.Constraints {
			var cs []model.Constraint
			for j := range set {
				c, err := set[j].model(fmt.Sprintf("jobs[%d].constraints[%d][%d]", i, k, j), 0)
				if err != nil {
					return nil, err
				}
				cs = append(cs, c)
			}
			constraintSets[i] = append(constraintSets[i], cs)
		}
	}
	deal := pattern(weights)
	rate := s.Arrival.JobsPerSecond
	if z.JobsPerSecond > 0 {
		rate = z.JobsPerSecond
	}
	scale := z.DurationScale
	if scale == 0 {
		scale = 1
	}
	jobs := make([]JobTemplate, z.Jobs)
	for j := range jobs {
		gi := deal[j%len(deal)]
		g := &s.Jobs[gi]
		t := JobTemplate{
			Name:      fmt.Sprintf("%s-%s-%d", s.Name, g.Name, j),
			Group:     g.Name,
			Instances: z.TasksPerJob,
			// Scenario amounts are decimal (cpu in cores); they become whole
			// units here, once.
			Resources:  model.ResourcesFromDecimal(draw(r, g.CPU), draw(r, g.MemMB), draw(r, g.DiskMB), draw(r, g.GPU)),
			MaxPerHost: g.MaxPerHost,
			GangSize:   g.GangSize,
			Strategy:   placement.StrategyPack,
			Duration:   time.Duration(float64(g.Duration) * scale),
		}
		if g.Distinct {
			t.Instances = 1
		}
		if g.Strategy != "" {
			t.Strategy, _ = placement.ParseStrategy(g.Strategy)
		}
		if len(g.Priority) > 0 {
			t.Priority = g.Priority[r.IntN(len(g.Priority))]
		}
		if sets := constraintSets[gi]; len(sets) > 0 {
			t.Constraints = sets[r.IntN(len(sets))]
		}
		for _, sp := range g.Spread {
			limit := sp.Max
			if limit == 0 {
				limit = int(math.Ceil(sp.Fraction * float64(t.Instances)))
			}
			t.Spread = append(t.Spread, placement.SpreadLimit{Key: sp.Key, Max: max(limit, 1)})
		}
		if s.Arrival.Pattern == "steady" {
			t.Arrival = time.Duration(float64(j) / rate * float64(time.Second))
		}
		jobs[j] = t
	}
	return jobs, nil
}

// PlacementHosts is the cluster as the placement core sees it, empty.
func (w *Workload) PlacementHosts() []placement.Host {
	out := make([]placement.Host, len(w.Hosts))
	for i, h := range w.Hosts {
		labels := make(map[string]string, len(h.Labels)+1)
		for k, v := range h.Labels {
			labels[k] = v
		}
		labels["hostname"] = h.Name
		out[i] = placement.Host{
			ID:          model.HostID(Cluster + "/" + h.Name),
			Cluster:     Cluster,
			Free:        h.Capacity,
			Labels:      labels,
			Ports:       1 << 16,
			Schedulable: true,
		}
	}
	return out
}

// appendTasks appends the tasks of jobs[from:to] to dst, numbering Refs
// from len(dst) and gangs from *gang.
func (w *Workload) appendTasks(dst []placement.Task, from, to int, gang *int) []placement.Task {
	for j := from; j < to; j++ {
		t := &w.Jobs[j]
		task := placement.Task{
			Job:         model.JobID(t.Name),
			Resources:   t.Resources,
			Constraints: t.Constraints,
			MaxPerHost:  t.MaxPerHost,
			Spread:      t.Spread,
			Strategy:    t.Strategy,
		}
		for i := range t.Instances {
			task.Ref = len(dst)
			task.Gang = 0
			if t.GangSize > 1 {
				if i%t.GangSize == 0 {
					*gang++
				}
				task.Gang = *gang
			}
			dst = append(dst, task)
		}
	}
	return dst
}

// PlacementTasks is every task of the workload, in job order.
func (w *Workload) PlacementTasks() []placement.Task {
	gang := 0
	return w.appendTasks(make([]placement.Task, 0, w.Tasks), 0, len(w.Jobs), &gang)
}

// JobSpec is the job the end-to-end run submits for template j.
func (w *Workload) JobSpec(j int) model.JobSpec {
	t := &w.Jobs[j]
	typ := model.JobBatch
	if t.Strategy == placement.StrategySpread {
		typ = model.JobService
	}
	duration := t.Duration
	if duration == 0 {
		duration = 24 * time.Hour
	}
	return model.JobSpec{
		Name: t.Name,
		Type: typ,
		// The root pool: the whole cluster, no quota.
		Pool:        "/",
		Preemptible: true,
		Priority:    t.Priority,
		Instances:   uint32(t.Instances),
		GangSize:    uint32(max(t.GangSize, 0)),
		MaxAttempts: 1,
		Task: model.TaskSpec{
			Command:     "simulated",
			Resources:   t.Resources,
			Constraints: t.Constraints,
			Env:         map[string]string{sim.EnvDuration: duration.String()},
		},
	}
}
