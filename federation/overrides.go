package federation

import (
	"fmt"
	"sort"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// renumberOverrides carries a job's instance overrides over to the job
// that relocation re-creates with only the instances that had not
// succeeded: instance k of the new job is the k-th of those, and keeps
// the override it had. Overrides left with no instance are dropped.
func renumberOverrides(ovs []*pb.InstanceOverride, succeeded []uint32) ([]*pb.InstanceOverride, error) {
	if len(ovs) == 0 {
		return nil, nil
	}
	done := append([]uint32(nil), succeeded...)
	sort.Slice(done, func(i, j int) bool { return done[i] < done[j] })
	// before(i) is how many succeeded instances come before instance i.
	before := func(i uint32) uint32 {
		return uint32(sort.Search(len(done), func(k int) bool { return done[k] >= i }))
	}
	isDone := func(i uint32) bool {
		k := before(i)
		return int(k) < len(done) && done[k] == i
	}
	var out []*pb.InstanceOverride
	for n, ov := range ovs {
		ranges, err := pb.ParseInstanceRanges(ov.GetInstances())
		if err != nil {
			return nil, fmt.Errorf("overrides[%d].instances: %w", n, err)
		}
		var kept []pb.InstanceRange
		for _, r := range ranges {
			for i := uint64(r.From); i <= uint64(r.To); i++ {
				if isDone(uint32(i)) {
					continue
				}
				k := uint32(i) - before(uint32(i))
				if m := len(kept); m > 0 && kept[m-1].To+1 == k {
					kept[m-1].To = k
				} else {
					kept = append(kept, pb.InstanceRange{From: k, To: k})
				}
			}
		}
		if len(kept) > 0 {
			out = append(out, &pb.InstanceOverride{Instances: pb.FormatInstanceRanges(kept), Task: ov.GetTask()})
		}
	}
	return out, nil
}
