package inproc

import (
	"context"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/store"
)

// ValueReplicas keeps a region's replicas of other regions' jobs in its
// store's named values as the binary does (federation.ValueReplicas), and
// reads or writes all of an owner's replicas at once.
type ValueReplicas struct{ *federation.ValueReplicas }

// NewValueReplicas keeps replicas in st.
func NewValueReplicas(st store.RecordStore) ValueReplicas {
	return ValueReplicas{federation.NewValueReplicas(st, clock.Real{})}
}

// LoadAll returns every replica held of owner's jobs, part after part.
func (v ValueReplicas) LoadAll(ctx context.Context, owner string) ([]*pb.Replica, error) {
	var out []*pb.Replica
	for part := range federation.ReplicaParts {
		list, err := v.Load(ctx, owner, part)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return out, nil
}

// SaveAll replaces every replica held of owner's jobs with replicas, each
// in its part.
func (v ValueReplicas) SaveAll(ctx context.Context, owner string, replicas []*pb.Replica) error {
	parts := make([][]*pb.Replica, federation.ReplicaParts)
	for _, r := range replicas {
		p := federation.ReplicaPart(r.GetJob().GetId())
		parts[p] = append(parts[p], r)
	}
	for part, list := range parts {
		if err := v.Save(ctx, owner, part, list); err != nil {
			return err
		}
	}
	return nil
}
