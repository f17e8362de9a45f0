package inproc

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/store"
)

// ValueReplicas keeps a region's replicas of other regions' jobs in its
// store's named values, one value per owner region, as the binary does.
type ValueReplicas struct{ Store store.ValueStore }

func (v ValueReplicas) key(owner string) string { return "federation/replicas/" + owner }

// Load returns the replicas held of owner's jobs.
func (v ValueReplicas) Load(ctx context.Context, owner string) ([]*pb.Replica, error) {
	data, err := v.Store.GetValue(ctx, v.key(owner))
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

// Save replaces the replicas held of owner's jobs.
func (v ValueReplicas) Save(ctx context.Context, owner string, replicas []*pb.Replica) error {
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: replicas})
	if err != nil {
		return err
	}
	return v.Store.PutValue(ctx, v.key(owner), data)
}
