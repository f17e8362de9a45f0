package service

import (
	"slices"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
)

// clusterPolicyToModel converts a validated cluster policy; a policy
// message that is present but empty stays present (it clears the pool's).
func clusterPolicyToModel(p *pb.ClusterPolicy) *model.ClusterPolicy {
	if p == nil {
		return nil
	}
	return &model.ClusterPolicy{Prefer: slices.Clone(p.GetPrefer()), Avoid: slices.Clone(p.GetAvoid())}
}

func clusterPolicyToProto(p *model.ClusterPolicy) *pb.ClusterPolicy {
	if p == nil {
		return nil
	}
	return &pb.ClusterPolicy{Prefer: slices.Clone(p.Prefer), Avoid: slices.Clone(p.Avoid)}
}
