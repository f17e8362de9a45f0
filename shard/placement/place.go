package placement

import (
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// Place assigns hosts to tasks and deducts what it assigns from x, so later
// tasks of the pass (and later passes) see it. It is a pure function of x,
// tasks and opts: no goroutines, clock, I/O or randomness beyond opts.Seed.
// Give it x.Clone() when the result may be discarded (a worker whose plan
// goes through Commit).
//
// Tasks with identical needs (job, resources, constraints, ports, limits,
// strategy) form one equivalence class, whose feasibility is evaluated once
// and whose instances are placed together: a class is a cursor over the fit
// tree of its feasibility group, so a 10,000-instance job costs a few tree
// descents per host it fills, not 10,000 scans. Tasks of a gang are placed
// together after one another; if any finds no host, the whole gang is
// rolled back and every member is reported unplaced.
func Place(x *HostIndex, tasks []Task, opts Options) Result {
	if x == nil {
		x, _ = NewHostIndex(nil)
	}
	if len(x.groupList) > maxCachedGroups {
		x.dropGroups()
	}
	p := &pass{
		x:          x,
		opts:       opts,
		classByKey: map[classKey]int32{},
		consKeys:   map[sliceID]string{},
	}
	units := p.plan(tasks)
	p.res.Assignments = make([]Assignment, 0, len(tasks))
	for i := range units {
		u := &units[i]
		if u.gang != 0 {
			p.placeGang(tasks, u)
			continue
		}
		c := p.classes[p.taskClass[u.tasks[0]]]
		if n := p.placeRun(tasks, c, u.tasks, nil); n < len(u.tasks) {
			e := p.explainCached(c)
			for _, ti := range u.tasks[n:] {
				p.res.Unplaced = append(p.res.Unplaced, Unplaced{Ref: tasks[ti].Ref, Reason: e})
			}
		}
	}
	return p.res
}

// pass is the working state of one Place call.
type pass struct {
	x    *HostIndex
	opts Options
	// epoch advances when a gang is rolled back: free amounts grew, so the
	// classes' cursors and exhaustion marks no longer hold.
	epoch      uint64
	classes    []*class
	taskClass  []int32
	classByKey map[classKey]int32
	consKeys   map[sliceID]string
	undo       []undoStep
	res        Result
}

// class is an equivalence class: tasks that any host either fits all of or
// none of, and that are placed the same way.
type class struct {
	job       model.JobID
	need      model.Resources
	needV     amounts
	ports     int
	cons      []model.Constraint
	hostPools []string
	// hostPoolReason is the filter's rejection of hosts outside hostPools.
	hostPoolReason string
	// ckey is the canonical key of the host pools and constraints.
	ckey       string
	maxPerHost int
	spread     []SpreadLimit
	strategy   Strategy
	// only and avoid are the task's Clusters and AvoidClusters, with the
	// reasons that name them (ckey has their key).
	only, avoid         []string
	onlyText, avoidText string
	// invalid says why the class's tasks cannot be placed at all.
	invalid string

	counts       *instanceCounts
	spreadCounts []map[string]int

	// groups are searched in order (plain hosts before GPU hosts for tasks
	// without GPU); cursor[i] is where the next search of groups[i] starts.
	groups    []*group
	cursor    []int
	epoch     uint64
	exhausted bool

	expl           *Explanation
	explEpoch      uint64
	constraintText map[*model.Constraint]string
}

type classKey struct {
	job        model.JobID
	countGroup string
	need       model.Resources
	cons       string
	hostPools  string
	ports      int
	maxPerHost int
	spread     string
	strategy   Strategy
	clusters   string
}

// sliceID identifies a constraint slice by its backing array, so tasks of
// one job sharing their spec's slice are keyed once.
type sliceID struct {
	first *model.Constraint
	n     int
}

type unit struct {
	gang  int
	tasks []int32
}

type undoStep struct {
	slot int32
	c    *class
	n    int
}

// plan sorts tasks into classes and units: one unit per gang, and one per
// class for tasks outside gangs, in order of first appearance.
func (p *pass) plan(tasks []Task) []unit {
	p.taskClass = make([]int32, len(tasks))
	var units []unit
	gangUnit := map[int]int32{}
	var classUnit []int32
	last := -1
	for i := range tasks {
		t := &tasks[i]
		var ci int32
		if last >= 0 && sameClass(&tasks[last], t) {
			ci = p.taskClass[last]
		} else {
			ci = p.classOf(t)
		}
		last = i
		p.taskClass[i] = ci
		if t.Gang != 0 {
			ui, ok := gangUnit[t.Gang]
			if !ok {
				ui = int32(len(units))
				gangUnit[t.Gang] = ui
				units = append(units, unit{gang: t.Gang})
			}
			units[ui].tasks = append(units[ui].tasks, int32(i))
			continue
		}
		for int(ci) >= len(classUnit) {
			classUnit = append(classUnit, -1)
		}
		if classUnit[ci] < 0 {
			classUnit[ci] = int32(len(units))
			units = append(units, unit{})
		}
		units[classUnit[ci]].tasks = append(units[classUnit[ci]].tasks, int32(i))
	}
	return units
}

// sameClass is the cheap test for consecutive tasks of one job spec.
func sameClass(a, b *Task) bool {
	return a.Job == b.Job && a.Resources == b.Resources && a.Ports == b.Ports &&
		a.MaxPerHost == b.MaxPerHost && a.Strategy == b.Strategy && a.SpreadGroup == b.SpreadGroup &&
		sameSlice(a.Constraints, b.Constraints) && sameSlice(a.Spread, b.Spread) && sameSlice(a.HostPools, b.HostPools) &&
		sameSlice(a.Clusters, b.Clusters) && sameSlice(a.AvoidClusters, b.AvoidClusters)
}

func sameSlice[T any](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

func (p *pass) classOf(t *Task) int32 {
	key := classKey{
		job: t.Job, need: t.Resources, ports: t.Ports, maxPerHost: t.MaxPerHost,
		strategy: t.Strategy, cons: p.constraintKey(t.Constraints), hostPools: hostPoolKey(t.HostPools),
		clusters: clusterKey(t.Clusters, t.AvoidClusters),
	}
	if t.hasLimits() {
		key.countGroup = t.countGroup()
	}
	for _, l := range t.Spread {
		key.spread += strconv.Itoa(len(l.Key)) + ":" + l.Key + "=" + strconv.Itoa(l.Max) + ";"
	}
	if ci, ok := p.classByKey[key]; ok {
		return ci
	}
	c := &class{
		job: t.Job, need: t.Resources, needV: p.x.scale.amounts(t.Resources, t.Ports), ports: t.Ports,
		cons: t.Constraints, ckey: key.clusters + key.hostPools + key.cons, maxPerHost: t.MaxPerHost, spread: t.Spread,
		hostPools: t.HostPools, hostPoolReason: hostPoolReason(t.HostPools),
		strategy: t.Strategy, invalid: validateTask(t),
		only: t.Clusters, avoid: t.AvoidClusters,
	}
	if len(t.AvoidClusters) > 0 {
		c.avoidText = ReasonAvoidedCluster + " [" + strings.Join(t.AvoidClusters, " ") + "]"
	}
	if len(t.Clusters) > 0 {
		c.onlyText = ReasonOtherCluster + " [" + strings.Join(t.Clusters, " ") + "]"
	}
	if c.strategy == StrategyDefault {
		c.strategy = p.opts.Strategy
	}
	if c.strategy != StrategySpread {
		c.strategy = StrategyPack
	}
	if c.invalid == "" && t.hasLimits() {
		c.counts = p.x.countsOf(t.countGroup())
		for _, l := range t.Spread {
			c.spreadCounts = append(c.spreadCounts, p.x.valueCounts(c.counts, l.Key))
		}
	}
	ci := int32(len(p.classes))
	p.classes = append(p.classes, c)
	p.classByKey[key] = ci
	return ci
}

func (p *pass) constraintKey(cs []model.Constraint) string {
	if len(cs) == 0 {
		return ""
	}
	id := sliceID{&cs[0], len(cs)}
	k, ok := p.consKeys[id]
	if !ok {
		k = constraintKey(cs)
		p.consKeys[id] = k
	}
	return k
}

// placeRun places the tasks idx (all of class c) one host at a time and
// returns how many it placed; identical tasks that stop fitting stop the
// run. When undo is not nil, each deduction is logged there.
func (p *pass) placeRun(tasks []Task, c *class, idx []int32, undo *[]undoStep) int {
	placed := 0
	for placed < len(idx) {
		slot, n := p.findHost(c, len(idx)-placed)
		if slot < 0 {
			break
		}
		p.x.take(slot, c.need, c.ports, n, c.counts)
		if undo != nil {
			*undo = append(*undo, undoStep{slot: slot, c: c, n: n})
		}
		host := p.x.ids[slot]
		for _, ti := range idx[placed : placed+n] {
			p.res.Assignments = append(p.res.Assignments, Assignment{Ref: tasks[ti].Ref, Host: host})
		}
		placed += n
	}
	return placed
}

// placeGang places every member of a gang or none.
func (p *pass) placeGang(tasks []Task, u *unit) {
	start := len(p.res.Assignments)
	p.undo = p.undo[:0]
	var failed []int32
	for i := 0; i < len(u.tasks); {
		ci := p.taskClass[u.tasks[i]]
		j := i + 1
		for j < len(u.tasks) && p.taskClass[u.tasks[j]] == ci {
			j++
		}
		run := u.tasks[i:j]
		if n := p.placeRun(tasks, p.classes[ci], run, &p.undo); n < len(run) {
			failed = append(failed, run[n:]...)
		}
		i = j
	}
	if len(failed) == 0 {
		return
	}
	for i := len(p.undo) - 1; i >= 0; i-- {
		s := p.undo[i]
		p.x.give(s.slot, s.c.need, s.c.ports, s.n, s.c.counts)
	}
	p.res.Assignments = p.res.Assignments[:start]
	p.epoch++
	detail := "gang " + strconv.Itoa(u.gang) + ": " + strconv.Itoa(len(failed)) + " of " +
		strconv.Itoa(len(u.tasks)) + " tasks found no host"
	for _, ti := range u.tasks {
		e := p.explainCached(p.classes[p.taskClass[ti]])
		if e.Code == Unschedulable {
			if e.Feasible > 0 {
				e.Code = GangIncomplete
			}
			e.Detail = detail
		}
		p.res.Unplaced = append(p.res.Unplaced, Unplaced{Ref: tasks[ti].Ref, Reason: e})
	}
}

func (p *pass) explainCached(c *class) Explanation {
	if c.expl == nil || c.explEpoch != p.epoch {
		e := p.explain(c)
		c.expl, c.explEpoch = &e, p.epoch
	}
	return *c.expl
}

// findHost returns a host for the next tasks of class c and how many of
// them (at most want) go there, or -1.
func (p *pass) findHost(c *class, want int) (int32, int) {
	if c.invalid != "" {
		return -1, 0
	}
	if c.groups == nil {
		p.initGroups(c)
	}
	if c.epoch != p.epoch {
		c.epoch, c.exhausted = p.epoch, false
		p.resetCursors(c)
	}
	if c.exhausted {
		return -1, 0
	}
	for gi, g := range c.groups {
		if c.strategy == StrategySpread {
			if slot, ok := p.nextSpread(c, gi, g); ok {
				return slot, 1
			}
			continue
		}
		// Pack: the first host in index order that fits. Hosts before the
		// cursor did not fit this class earlier in the pass and cannot fit
		// now, since free amounts only shrink between rollbacks.
		for pos := c.cursor[gi]; ; pos++ {
			pos = g.tree.first(pos, len(g.slots), &c.needV)
			if pos < 0 {
				c.cursor[gi] = len(g.slots)
				break
			}
			c.cursor[gi] = pos
			if n := p.room(c, g.slots[pos], want); n > 0 {
				return g.slots[pos], n
			}
		}
	}
	c.exhausted = true
	return -1, 0
}

// nextSpread looks for a fitting host from the class's rotating cursor,
// wrapping once around the group.
func (p *pass) nextSpread(c *class, gi int, g *group) (int32, bool) {
	start := c.cursor[gi]
	for _, span := range [2][2]int{{start, len(g.slots)}, {0, start}} {
		for pos := span[0]; ; pos++ {
			pos = g.tree.first(pos, span[1], &c.needV)
			if pos < 0 {
				break
			}
			if p.room(c, g.slots[pos], 1) > 0 {
				c.cursor[gi] = (pos + 1) % len(g.slots)
				return g.slots[pos], true
			}
		}
	}
	return -1, false
}

func (p *pass) initGroups(c *class) {
	tiers := []tier{tierPlain, tierGPU}
	if c.need.GPU > 0 {
		tiers = tiers[1:]
	}
	for _, t := range tiers {
		g := p.x.groupFor(t, c)
		if len(g.slots) > 0 {
			c.groups = append(c.groups, g)
		}
	}
	if c.groups == nil {
		c.groups = []*group{}
	}
	c.cursor = make([]int, len(c.groups))
	c.epoch = p.epoch
	p.resetCursors(c)
}

func (p *pass) resetCursors(c *class) {
	for i, g := range c.groups {
		c.cursor[i] = 0
		if c.strategy == StrategySpread {
			c.cursor[i] = int(spreadStart(p.opts.Seed, c) % uint64(len(g.slots)))
		}
	}
}

// spreadStart derives a class's first spread position from the seed and
// the class's job, so passes with the same seed rotate the same way.
func spreadStart(seed uint64, c *class) uint64 {
	h := seed ^ 0x9e3779b97f4a7c15
	for i := 0; i < len(c.job); i++ {
		h = (h ^ uint64(c.job[i])) * 0x100000001b3
	}
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	return h ^ (h >> 29)
}

// room is how many of want tasks of class c host slot takes now, given the
// limits and what is free: the dynamic filters of the chain, in bulk.
func (p *pass) room(c *class, slot int32, want int) int {
	x := p.x
	if c.maxPerHost > 0 {
		want = min(want, c.maxPerHost-c.counts.perHost[slot])
	}
	for i, l := range c.spread {
		want = min(want, l.Max-c.spreadCounts[i][x.labels[slot][l.Key]])
	}
	f, ports := x.free[slot], x.ports[slot]
	n := 0
	for n < want && c.ports <= ports && c.need.Fits(f) {
		f = f.Sub(c.need)
		ports -= c.ports
		n++
	}
	return n
}
