package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// JobRequest is what routing needs to know about a job being submitted.
type JobRequest struct {
	Pool        string
	PerTask     model.Resources
	Instances   uint32
	Constraints []model.Constraint
	// Region pins the job to one region; empty lets the federation choose.
	Region string
	// Allowed restricts the choice to these regions; empty allows all.
	Allowed []string
	// Routed is, by region, work routed there since the regions' states
	// were gathered, which the states do not show yet: it counts as held,
	// so that jobs routed between two gathers do not all go to the region
	// that looked best at the first.
	Routed map[string]Routed
}

// Routed is work routed to a region since its state was gathered: what it
// asks of the job's pool, and of the region in all.
type Routed struct {
	Pool, Region model.Resources
}

// Choice is the region a job goes to, with the reasons: the first line says
// why this region, the others what each region offered or why it was
// excluded, in region name order. They are meant for the API's response and
// for `--explain`.
type Choice struct {
	Region  string
	Reasons []string
}

// ChooseRegion picks the region a job goes to.
//
// A pinned job goes to its region, which must be known, not failed (fenced
// regions are failed) and, when the job lists allowed regions, one of them.
// A suspect region is accepted, with a reason saying so, and so is one whose
// hosts cannot satisfy the job's constraints (the job will wait there).
//
// Otherwise the candidates are the regions that are alive (not suspect or
// failed), allowed, whose hosts might satisfy the constraints (CouldSatisfy)
// and whose capacity holds at least one task. Among them, the winner has,
// in this order, room for the most tasks:
//
//  1. in the reservation left in the job's pool (the region's reservation
//     share minus what the pool holds there);
//  2. in the limit left in the job's pool (limit share minus allocation);
//  3. in the region's free capacity (capacity minus allocation);
//
// counted in whole tasks of the job's size over the resources it uses,
// then the first by name. What a region holds includes the work routed
// there since the states were gathered (req.Routed). A region without a
// share of the pool counts as having none left. When no region qualifies, the error wraps ErrNoRegion
// and the Choice still carries the reasons.
func ChooseRegion(req JobRequest, regions []RegionState, shares Shares) (Choice, error) {
	rs := sortedRegions(regions)
	if req.Region != "" {
		return choosePinned(req, rs)
	}
	var cands []candidate
	var lines []string
	for _, r := range rs {
		if why := exclusion(req, r); why != "" {
			lines = append(lines, r.Name+": excluded: "+why)
			continue
		}
		c := measure(req, r, shares)
		cands = append(cands, c)
		lines = append(lines, fmt.Sprintf("%s: room for %s in reservation left, %s in limit left, %s in free capacity",
			r.Name, formatTasks(c.reservationFit), formatTasks(c.limitFit), formatTasks(c.freeFit)))
	}
	if len(cands) == 0 {
		if len(lines) == 0 {
			return Choice{}, fmt.Errorf("pool %s: %w: no regions known", req.Pool, ErrNoRegion)
		}
		return Choice{Reasons: lines}, fmt.Errorf("pool %s: %w: %s", req.Pool, ErrNoRegion, strings.Join(lines, "; "))
	}
	best := slices.MinFunc(cands, compareCandidates)
	why := "chose " + best.region + ": " + decidingKey(best, cands, req.Pool)
	return Choice{Region: best.region, Reasons: append([]string{why}, lines...)}, nil
}

func choosePinned(req JobRequest, rs []RegionState) (Choice, error) {
	i, found := slices.BinarySearchFunc(rs, req.Region, func(r RegionState, name string) int { return cmp.Compare(r.Name, name) })
	switch {
	case !found:
		return Choice{}, fmt.Errorf("job pinned to region %q: %w", req.Region, ErrUnknownRegion)
	case len(req.Allowed) > 0 && !slices.Contains(req.Allowed, req.Region):
		return Choice{}, fmt.Errorf("job pinned to region %q, allowed %v: %w", req.Region, req.Allowed, ErrRegionNotAllowed)
	case rs[i].Health == HealthFailed:
		return Choice{}, fmt.Errorf("job pinned to region %q: %w", req.Region, ErrRegionFailed)
	}
	r := rs[i]
	reasons := []string{"chose " + r.Name + ": pinned by the job"}
	if r.Health == HealthSuspect {
		reasons = append(reasons, r.Name+": suspect (members unreachable); the job is accepted there anyway")
	}
	if c, bad := firstUnsatisfiable(req.Constraints, r.HostLabels); bad {
		reasons = append(reasons, r.Name+": no host can satisfy "+c.String()+"; tasks wait until one can")
	}
	return Choice{Region: r.Name, Reasons: reasons}, nil
}

// exclusion says why a region cannot take a job that is not pinned; empty
// when it can.
func exclusion(req JobRequest, r RegionState) string {
	switch {
	case len(req.Allowed) > 0 && !slices.Contains(req.Allowed, r.Name):
		return "not in allowed regions"
	case r.Health != HealthAlive:
		return r.Health.String()
	}
	if c, bad := firstUnsatisfiable(req.Constraints, r.HostLabels); bad {
		return "no host can satisfy " + c.String()
	}
	if tasksThatFit(clampNonNegative(r.Capacity), req.PerTask) < 1 {
		return "capacity " + formatResources(r.Capacity) + " cannot hold one task of " + formatResources(req.PerTask)
	}
	return ""
}

// candidate is a region that can take a job, with its room for the job's
// tasks in whole tasks.
type candidate struct {
	region         string
	reservationFit int64
	limitFit       int64
	freeFit        int64
}

func measure(req JobRequest, r RegionState, shares Shares) candidate {
	share, _ := shares.Get(r.Name, req.Pool)
	routed := req.Routed[r.Name]
	held := r.Pools[req.Pool].Allocation.Add(clampNonNegative(routed.Pool))
	return candidate{
		region:         r.Name,
		reservationFit: tasksThatFit(share.Reservation.Sub(held), req.PerTask),
		limitFit:       tasksThatFit(leftOf(share.Limit, held), req.PerTask),
		freeFit:        tasksThatFit(r.Capacity.Sub(r.Allocation).Sub(clampNonNegative(routed.Region)), req.PerTask),
	}
}

// compareCandidates orders the better candidate first.
func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(b.reservationFit, a.reservationFit); c != 0 {
		return c
	}
	if c := cmp.Compare(b.limitFit, a.limitFit); c != 0 {
		return c
	}
	if c := cmp.Compare(b.freeFit, a.freeFit); c != 0 {
		return c
	}
	return cmp.Compare(a.region, b.region)
}

// decidingKey names the first ranking key on which best beats every
// candidate it tied with on the keys before.
func decidingKey(best candidate, cands []candidate, pool string) string {
	if len(cands) == 1 {
		return "the only region that can take the job"
	}
	keys := [...]struct {
		tiedBefore, name string
		of               func(candidate) int64
	}{
		{"", "most reservation left in pool " + pool, func(c candidate) int64 { return c.reservationFit }},
		{"tied on reservation left, ", "most limit left in pool " + pool, func(c candidate) int64 { return c.limitFit }},
		{"tied on reservation and limit left, ", "most free capacity", func(c candidate) int64 { return c.freeFit }},
	}
	var rivals []candidate
	for _, c := range cands {
		if c.region != best.region {
			rivals = append(rivals, c)
		}
	}
	for _, k := range keys {
		var tied []candidate
		for _, c := range rivals {
			if k.of(c) == k.of(best) {
				tied = append(tied, c)
			}
		}
		if len(tied) == 0 {
			return k.tiedBefore + k.name
		}
		rivals = tied
	}
	return "tied on reservation, limit and capacity left, first by name"
}
