package inproc

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/protobuf/proto"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/store"
)

// ValueReplicas keeps a region's replicas of other regions' jobs in its
// store's named values, federation.ReplicaParts values per owner region,
// as the binary does.
type ValueReplicas struct{ Store store.ValueStore }

func (v ValueReplicas) key(owner string, part int) string {
	return "federation/replicas/" + owner + "/" + strconv.Itoa(part)
}

// Load returns one part of the replicas held of owner's jobs.
func (v ValueReplicas) Load(ctx context.Context, owner string, part int) ([]*pb.Replica, error) {
	data, err := v.Store.GetValue(ctx, v.key(owner, part))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list pb.ListReplicasResponse
	if err := proto.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	return list.Replicas, nil
}

// Save replaces one part of the replicas held of owner's jobs.
func (v ValueReplicas) Save(ctx context.Context, owner string, part int, replicas []*pb.Replica) error {
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: replicas})
	if err != nil {
		return err
	}
	return v.Store.PutValue(ctx, v.key(owner, part), data)
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
