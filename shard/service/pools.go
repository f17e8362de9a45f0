package service

import (
	"context"
	"fmt"
	"math"
	"slices"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// poolToModel converts a validated pool spec: absent limits are unlimited,
// absent shares are 1.
func poolToModel(s *pb.PoolSpec) model.Pool {
	return model.Pool{
		Path:        s.Path,
		Reservation: resourcesToModel(s.Reservation),
		Limit:       resourcesToModel(s.Limit.Resolve(math.Inf(1))),
		Share:       sharesToModel(s.Share.Resolve(1)),
		HostPools:   slices.Clone(s.HostPools),
		Clusters:    clusterPolicyToModel(s.GetClusters()),
	}
}

func sharesToModel(r *pb.Resources) model.Shares {
	return model.Shares{CPU: r.Cpu, Mem: r.MemMb, Disk: r.DiskMb, GPU: r.Gpu}
}

// amounts renders decimal amounts, leaving out those equal to skip.
func amounts(cpu, mem, disk, gpu, skip float64) *pb.ResourceAmounts {
	out := &pb.ResourceAmounts{}
	set := func(v float64) *float64 {
		if v == skip {
			return nil
		}
		return &v
	}
	out.Cpu, out.MemMb, out.DiskMb, out.Gpu = set(cpu), set(mem), set(disk), set(gpu)
	return out
}

// limitAmounts renders limits, leaving out unlimited ones.
func limitAmounts(r model.Resources) *pb.ResourceAmounts {
	cpu, mem, disk, gpu := r.Decimal()
	return amounts(cpu, mem, disk, gpu, math.Inf(1))
}

func poolToProto(v jobmgr.PoolView) *pb.Pool {
	p := &pb.Pool{
		Path:         v.Pool.Path,
		Children:     v.Children,
		Jobs:         uint32(v.Jobs),
		PendingTasks: uint32(v.Pending),
		RunningTasks: uint32(v.Running),
		Spec: &pb.PoolSpec{
			Path:        v.Pool.Path,
			Reservation: resourcesToProto(v.Pool.Reservation),
			Limit:       limitAmounts(v.Pool.Limit),
			Share:       amounts(v.Pool.Share.CPU, v.Pool.Share.Mem, v.Pool.Share.Disk, v.Pool.Share.GPU, 1),
			HostPools:   v.Pool.HostPools,
			Clusters:    clusterPolicyToProto(v.Pool.Clusters),
		},
	}
	for i, name := range model.ResourceKinds {
		p.Resources = append(p.Resources, &pb.PoolResource{
			Name:           name,
			Reservation:    model.DecimalOf(i, v.Reservation.Get(i)),
			Limit:          model.DecimalOf(i, v.Limit.Get(i)),
			Share:          v.Pool.Share.Get(i),
			Demand:         model.DecimalOf(i, v.Demand.Get(i)),
			Allocation:     model.DecimalOf(i, v.Allocation.Get(i)),
			Entitlement:    model.DecimalOf(i, v.Entitlement.Get(i)),
			UncappedDemand: model.DecimalOf(i, v.UncappedDemand.Get(i)),
		})
	}
	return p
}

func (s *api) checkPoolSpec(spec *pb.PoolSpec) error {
	if spec == nil {
		return invalid("spec", "required")
	}
	problems := append(pb.UnknownFieldProblems(spec), pb.ValidatePoolSpec(spec)...)
	seen := map[string]bool{}
	for i, name := range spec.HostPools {
		path := fmt.Sprintf("hostPools[%d]", i)
		switch {
		case !model.ValidHostPoolName(name):
			problems = append(problems, pb.FieldError{Path: path, Message: fmt.Sprintf("%q: want 1 to %d lowercase letters, digits and -, starting with a letter", name, model.MaxHostPoolName)})
		case seen[name]:
			problems = append(problems, pb.FieldError{Path: path, Message: fmt.Sprintf("%q is named twice", name)})
		}
		seen[name] = true
	}
	return toStatus(pb.NewSpecError(problems))
}

func (s *poolService) CreatePool(ctx context.Context, req *pb.CreatePoolRequest) (*pb.CreatePoolResponse, error) {
	if err := s.checkPoolSpec(req.Spec); err != nil {
		return nil, err
	}
	if _, err := jobmgr.Do(ctx, s.engine, jobmgr.CreatePool{Pool: poolToModel(req.Spec)}); err != nil {
		return nil, toStatus(err)
	}
	v, err := s.engine.Reads().GetPool(req.Spec.Path)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CreatePoolResponse{Pool: poolToProto(v)}, nil
}

func (s *poolService) UpdatePool(ctx context.Context, req *pb.UpdatePoolRequest) (*pb.UpdatePoolResponse, error) {
	if err := s.checkPoolSpec(req.Spec); err != nil {
		return nil, err
	}
	if _, err := jobmgr.Do(ctx, s.engine, jobmgr.UpdatePool{Pool: poolToModel(req.Spec)}); err != nil {
		return nil, toStatus(err)
	}
	v, err := s.engine.Reads().GetPool(req.Spec.Path)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.UpdatePoolResponse{Pool: poolToProto(v)}, nil
}

func (s *poolService) DeletePool(ctx context.Context, req *pb.DeletePoolRequest) (*pb.DeletePoolResponse, error) {
	if err := requireID("path", req.Path); err != nil {
		return nil, err
	}
	if _, err := jobmgr.Do(ctx, s.engine, jobmgr.DeletePool{Path: pb.NormalizePoolPath(req.Path)}); err != nil {
		return nil, toStatus(err)
	}
	return &pb.DeletePoolResponse{}, nil
}

func (s *poolService) ListPools(ctx context.Context, req *pb.ListPoolsRequest) (*pb.ListPoolsResponse, error) {
	out := &pb.ListPoolsResponse{}
	for _, v := range s.engine.Reads().ListPools(req.GetInUse()) {
		out.Pools = append(out.Pools, poolToProto(v))
	}
	return out, nil
}

func (s *poolService) GetPool(ctx context.Context, req *pb.GetPoolRequest) (*pb.GetPoolResponse, error) {
	v, err := s.engine.Reads().GetPool(pb.NormalizePoolPath(req.Path))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetPoolResponse{Pool: poolToProto(v)}, nil
}
