package placement

import (
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
)

// NaivePlace is the reference placement the optimised one is measured and
// tested against: for every task, an exhaustive scan over a flat array of
// hosts that keeps the best fit (least free left over, normalised per
// dimension by the largest free amount; see leftover). It honours the same
// feasibility rules as Place (schedulable, host pools, constraints, limits,
// resources, ports), prefers plain hosts to GPU hosts for tasks without GPU,
// and places gangs all-or-nothing; its explanations carry only the host
// counts.
func NaivePlace(hosts []Host, tasks []Task) Result {
	n := newNaive(hosts)
	return n.placeEach(tasks, n.best)
}

// placeEach places tasks one at a time on the host pick chooses (-1: none),
// deducting as it goes; a gang's members are picked in turn and given back
// when one of them finds no host.
func (n *naive) placeEach(tasks []Task, pick func(t *Task) int) Result {
	var res Result
	seen := map[int]bool{}
	for i := range tasks {
		t := &tasks[i]
		if t.Gang == 0 {
			if h := pick(t); h >= 0 {
				n.take(h, t, 1)
				res.Assignments = append(res.Assignments, Assignment{Ref: t.Ref, Host: n.hosts[h].ID})
			} else {
				res.Unplaced = append(res.Unplaced, Unplaced{Ref: t.Ref, Reason: n.unplaced()})
			}
			continue
		}
		if seen[t.Gang] {
			continue
		}
		seen[t.Gang] = true
		var members []*Task
		for j := i; j < len(tasks); j++ {
			if tasks[j].Gang == t.Gang {
				members = append(members, &tasks[j])
			}
		}
		var chosen []int
		for _, m := range members {
			h := pick(m)
			if h < 0 {
				break
			}
			n.take(h, m, 1)
			chosen = append(chosen, h)
		}
		if len(chosen) == len(members) {
			for k, m := range members {
				res.Assignments = append(res.Assignments, Assignment{Ref: m.Ref, Host: n.hosts[chosen[k]].ID})
			}
			continue
		}
		for k := len(chosen) - 1; k >= 0; k-- {
			n.take(chosen[k], members[k], -1)
		}
		for _, m := range members {
			res.Unplaced = append(res.Unplaced, Unplaced{Ref: m.Ref, Reason: n.unplaced()})
		}
	}
	return res
}

type naive struct {
	hosts []Host
	scale model.Resources
	// perHost[group][host] and perValue[group][key][value] count instances.
	perHost  map[string]map[int]int
	perValue map[string]map[string]map[string]int
	total    map[string]int
}

func newNaive(hosts []Host) *naive {
	n := &naive{
		hosts:    make([]Host, len(hosts)),
		perHost:  map[string]map[int]int{},
		perValue: map[string]map[string]map[string]int{},
		total:    map[string]int{},
	}
	copy(n.hosts, hosts)
	for i := range n.hosts {
		h := &n.hosts[i]
		h.GPUHost = h.GPUHost || h.Free.GPU > 0
		n.scale = n.scale.Max(h.Free)
		for g, c := range h.Instances {
			n.count(g, i, c)
		}
	}
	return n
}

func (n *naive) count(g string, h, d int) {
	if n.perHost[g] == nil {
		n.perHost[g] = map[int]int{}
		n.perValue[g] = map[string]map[string]int{}
	}
	n.perHost[g][h] += d
	for key, lbl := range n.hosts[h].Labels {
		if n.perValue[g][key] == nil {
			n.perValue[g][key] = map[string]int{}
		}
		n.perValue[g][key][lbl] += d
	}
	n.total[g] += d
}

// valueCount is the number of instances of group g on hosts whose label key
// has the same value as host h's (hosts without it count together).
func (n *naive) valueCount(g string, key string, h int) int {
	if v := n.hosts[h].Labels[key]; v != "" {
		return n.perValue[g][key][v]
	}
	labelled := 0
	for _, c := range n.perValue[g][key] {
		labelled += c
	}
	// Hosts without the key count together: all instances but the
	// labelled ones.
	return n.total[g] - labelled + n.perValue[g][key][""]
}

func (n *naive) fits(h int, t *Task) bool {
	host := &n.hosts[h]
	if !host.Schedulable || slices.Contains(t.AvoidClusters, host.Cluster) ||
		(len(t.Clusters) > 0 && !slices.Contains(t.Clusters, host.Cluster)) ||
		!inHostPools(t.HostPools, host.HostPool) || !matchesAll(t.Constraints, host.Labels) {
		return false
	}
	g := t.countGroup()
	if t.MaxPerHost > 0 && n.perHost[g][h] >= t.MaxPerHost {
		return false
	}
	for _, l := range t.Spread {
		if n.valueCount(g, l.Key, h) >= l.Max {
			return false
		}
	}
	return t.Resources.Fits(host.Free) && t.Ports <= host.Ports
}

// skipsTier reports whether host h is left out of the pass over gpuPass
// hosts for task t: tasks without GPU look at plain hosts first and at GPU
// hosts only when no plain host fits.
func (n *naive) skipsTier(h int, t *Task, gpuPass bool) bool {
	return t.Resources.GPU <= 0 && n.hosts[h].GPUHost != gpuPass
}

// leftover is the best-fit criterion: what stays free on host h once t is
// placed there, summed over the resource kinds, each divided by the
// largest free amount of that kind in the snapshot. Lower is a better fit.
func (n *naive) leftover(h int, t *Task) float64 {
	left := n.hosts[h].Free.Sub(t.Resources)
	score := 0.0
	for d := range len(model.ResourceKinds) {
		if s := n.scale.Get(d); s > 0 {
			score += float64(left.Get(d)) / float64(s)
		}
	}
	return score
}

func (n *naive) best(t *Task) int {
	if validateTask(t) != "" {
		return -1
	}
	for _, gpuPass := range []bool{false, true} {
		best, bestScore := -1, 0.0
		for h := range n.hosts {
			if n.skipsTier(h, t, gpuPass) || !n.fits(h, t) {
				continue
			}
			if score := n.leftover(h, t); best < 0 || score < bestScore {
				best, bestScore = h, score
			}
		}
		if best >= 0 || t.Resources.GPU > 0 {
			return best
		}
	}
	return -1
}

// take deducts d instances of t from host h (d = -1 gives one back).
func (n *naive) take(h int, t *Task, d int) {
	host := &n.hosts[h]
	if d > 0 {
		host.Free = host.Free.Sub(t.Resources)
	} else {
		host.Free = host.Free.Add(t.Resources)
	}
	host.Ports -= d * t.Ports
	if t.hasLimits() {
		n.count(t.countGroup(), h, d)
	}
}

func (n *naive) unplaced() Explanation {
	return Explanation{Code: Unschedulable, Hosts: len(n.hosts)}
}
