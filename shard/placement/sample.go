package placement

import (
	"math/rand/v2"

	"github.com/peloton-federated/peloton/shard/model"
)

// Sampled placement is the baseline a production scheduler uses instead of
// an exhaustive scan: score a bounded sample of the feasible hosts and take
// the best of those. kube-scheduler stops looking for feasible nodes once it
// has found numFeasibleNodesToFind of them (percentageOfNodesToScore) and
// starts the next pod's search where the last one stopped, round-robin over
// its node list; Nomad ranks a limited number of feasible nodes (its limit
// iterator) of a list it shuffles once per evaluation. SampledPlace walks
// the hosts as kube-scheduler does, from a start the seed picks, and scores
// SampleSize feasible hosts per task with the full scan's criterion
// (leftover). It walks the hosts in their given order rather than a
// shuffle, so it reads memory in the same order as the full scan and the
// comparison of their speeds is about the hosts they visit.

// Bounds of kube-scheduler's adaptive default for percentageOfNodesToScore.
const (
	// minSampledHosts is the fewest feasible hosts scored per task
	// (kube-scheduler's minFeasibleNodesToFind).
	minSampledHosts = 100
	// minSampledPercent is the lowest adaptive percentage
	// (minFeasibleNodesPercentageToFind).
	minSampledPercent = 5
	// baseSampledPercent is the adaptive percentage's starting point; it
	// falls by one for every 125 hosts.
	baseSampledPercent = 50
)

// SampleSize is how many feasible hosts the sampled baseline scores per task
// in a cluster of n hosts: kube-scheduler's adaptive default. Below 100
// hosts, all of them; otherwise (50 − n/125)% of n, at least 5% and at least
// 100 hosts. 1,000 hosts give 420, 5,000 give 500, 10,000 give 500 and
// 50,000 give 2,500.
func SampleSize(n int) int {
	if n < minSampledHosts {
		return max(n, 0)
	}
	pct := max(baseSampledPercent-n/125, minSampledPercent)
	return max(n*pct/100, minSampledHosts)
}

// SampleOptions tune SampledPlace.
type SampleOptions struct {
	// Seed picks where the first walk starts: the same hosts, tasks and
	// seed give the same result.
	Seed uint64
	// Size is how many feasible hosts are scored per task; zero means
	// SampleSize(len(hosts)).
	Size int
}

// SampledPlace places tasks one at a time, like NaivePlace, with the same
// feasibility rules, tiers, gang handling and best-fit criterion, but scores
// only the first Size feasible hosts of a round-robin walk over the hosts;
// the first walk starts at a host the seed picks, each later one where the
// previous one stopped. A task that fits somewhere is always placed: with fewer than Size
// feasible hosts the walk covers every host.
func SampledPlace(hosts []Host, tasks []Task, opts SampleOptions) Result {
	s := newSampler(hosts, opts)
	return s.n.placeEach(tasks, s.pick)
}

// SampleQuality compares the sampled baseline's placement with the full
// scan's (NaivePlace) on the same hosts and tasks, each run from the same
// snapshot on its own. The fit of task t on host h is how full h is, in the
// resource kinds t asks for, once t is on it, each kind relative to the
// largest free amount of that kind in the snapshot (on a fresh cluster of
// one host shape, the host's capacity), averaged over those kinds K(t):
//
//	fit(h, t) = 1/|K(t)| · Σ_{k ∈ K(t)} (1 − (free_k(h) − need_k(t)) / scale_k)
//
// 1 is a perfect fit (t takes all that is left on h); a small task on an
// empty host fits little. This is kube-scheduler's MostAllocated score and
// the full scan's own criterion restricted to the kinds the task uses: the
// full scan picks the host that leaves least free, so, among the hosts it
// may use, the host of highest fit whenever the task asks for every kind
// the hosts have. Fraction is the sampled run's mean fit over the tasks it
// placed divided by the full scan's over the tasks it placed: how much of
// the full scan's best-fit score sampling keeps, its own earlier choices
// included. Greedy best fit is not optimal, so Fraction may exceed 1, but
// seldom does.
type SampleQuality struct {
	// Placed counts the tasks each run placed.
	SampledPlaced, FullScanPlaced int
	// SampledFit and FullScanFit are the mean fits.
	SampledFit, FullScanFit float64
	Fraction                float64
}

// SampledQuality runs SampledPlace (the same choices, the same result) and
// NaivePlace, recording the fit of every task they place, for
// SampleQuality. It costs a full scan per task: measure speed with
// SampledPlace.
func SampledQuality(hosts []Host, tasks []Task, opts SampleOptions) (Result, SampleQuality) {
	var q SampleQuality
	s := newSampler(hosts, opts)
	res, fits := s.n.placeFitted(tasks, s.pick)
	q.SampledPlaced, q.SampledFit = meanFit(res, fits)
	n := newNaive(hosts)
	full, fullFits := n.placeFitted(tasks, n.best)
	q.FullScanPlaced, q.FullScanFit = meanFit(full, fullFits)
	if q.FullScanFit > 0 {
		q.Fraction = q.SampledFit / q.FullScanFit
	}
	return res, q
}

// placeFitted is placeEach recording the fit of each task's last choice,
// by Ref.
func (n *naive) placeFitted(tasks []Task, pick func(t *Task) int) (Result, map[int]float64) {
	fits := make(map[int]float64, len(tasks))
	res := n.placeEach(tasks, func(t *Task) int {
		h := pick(t)
		if h >= 0 {
			fits[t.Ref] = n.fit(h, t)
		}
		return h
	})
	return res, fits
}

func meanFit(res Result, fits map[int]float64) (int, float64) {
	if len(res.Assignments) == 0 {
		return 0, 0
	}
	sum := 0.0
	for _, a := range res.Assignments {
		sum += fits[a.Ref]
	}
	return len(res.Assignments), sum / float64(len(res.Assignments))
}

// fit is how full host h is in the kinds t asks for once t is on it (see
// SampleQuality); a task that asks for nothing fits every host perfectly.
func (n *naive) fit(h int, t *Task) float64 {
	left := n.hosts[h].Free.Sub(t.Resources)
	sum, kinds := 0.0, 0
	for d := range len(model.ResourceKinds) {
		if s := n.scale.Get(d); s > 0 && t.Resources.Get(d) > 0 {
			sum += 1 - float64(left.Get(d))/float64(s)
			kinds++
		}
	}
	if kinds == 0 {
		return 1
	}
	return sum / float64(kinds)
}

type sampler struct {
	n    *naive
	size int
	next int
}

// newSampler starts the first walk at a host chosen by the seed.
func newSampler(hosts []Host, opts SampleOptions) *sampler {
	size := opts.Size
	if size <= 0 {
		size = SampleSize(len(hosts))
	}
	s := &sampler{n: newNaive(hosts), size: size}
	if len(hosts) > 0 {
		s.next = rand.New(rand.NewPCG(opts.Seed, 0x5eed)).IntN(len(hosts))
	}
	return s
}

// pick walks the hosts from where the last walk stopped and keeps
// the best fit among the first s.size feasible hosts of the task's tier
// (plain hosts first for a task without GPU, as NaivePlace).
func (s *sampler) pick(t *Task) int {
	hosts := len(s.n.hosts)
	if validateTask(t) != "" || hosts == 0 {
		return -1
	}
	for _, gpuPass := range []bool{false, true} {
		best, bestScore, found, walked := -1, 0.0, 0, 0
		for walked < hosts && found < s.size {
			h := (s.next + walked) % hosts
			walked++
			if s.n.skipsTier(h, t, gpuPass) || !s.n.fits(h, t) {
				continue
			}
			found++
			if score := s.n.leftover(h, t); best < 0 || score < bestScore {
				best, bestScore = h, score
			}
		}
		s.next = (s.next + walked) % hosts
		if best >= 0 || t.Resources.GPU > 0 {
			return best
		}
	}
	return -1
}
