package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/store"
	"google.golang.org/protobuf/proto"
)

// valueReplicas keeps a region's replicas of other regions' jobs in its
// store's named values: ReplicaParts values per owner region. A store
// written by an earlier version holds each owner's replicas in one value:
// the first read of a part not saved yet moves that list into the parts.
type valueReplicas struct {
	st   store.ValueStore
	book *regionBook
}

func (v valueReplicas) key(owner string) string { return "federation/replicas/" + owner }

func (v valueReplicas) partKey(owner string, part int) string {
	return v.key(owner) + "/" + strconv.Itoa(part)
}

func (v valueReplicas) Load(ctx context.Context, owner string, part int) ([]*pb.Replica, error) {
	list, err := v.read(ctx, v.partKey(owner, part))
	if errors.Is(err, store.ErrNotFound) {
		list, err = v.moveOneList(ctx, owner, part)
	}
	if err != nil {
		return nil, fmt.Errorf("replicas of %s, part %d: %w", owner, part, err)
	}
	v.book.replicasCounted(owner, part, len(list), false)
	return list, nil
}

// moveOneList moves owner's replicas kept in one value, as an earlier
// version kept them, into the parts not saved yet (each of them written,
// empty or not, so that none is looked for there again), then empties
// that value. It returns the replicas of part.
func (v valueReplicas) moveOneList(ctx context.Context, owner string, part int) ([]*pb.Replica, error) {
	old, err := v.read(ctx, v.key(owner))
	if errors.Is(err, store.ErrNotFound) || err == nil && len(old) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	parts := make([][]*pb.Replica, federation.ReplicaParts)
	for _, r := range old {
		p := federation.ReplicaPart(r.GetJob().GetId())
		parts[p] = append(parts[p], r)
	}
	for p, list := range parts {
		if _, err := v.st.GetValue(ctx, v.partKey(owner, p)); !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return nil, err
			}
			continue // saved since: newer than the old list
		}
		if err := v.write(ctx, v.partKey(owner, p), list); err != nil {
			return nil, err
		}
	}
	if err := v.write(ctx, v.key(owner), nil); err != nil {
		return nil, err
	}
	return parts[part], nil
}

func (v valueReplicas) read(ctx context.Context, key string) ([]*pb.Replica, error) {
	data, err := v.st.GetValue(ctx, key)
	if err != nil {
		return nil, err
	}
	var list pb.ListReplicasResponse
	if err := proto.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	return list.Replicas, nil
}

func (v valueReplicas) write(ctx context.Context, key string, replicas []*pb.Replica) error {
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: replicas})
	if err != nil {
		return err
	}
	return v.st.PutValue(ctx, key, data)
}

func (v valueReplicas) Save(ctx context.Context, owner string, part int, replicas []*pb.Replica) error {
	if err := v.write(ctx, v.partKey(owner, part), replicas); err != nil {
		return err
	}
	v.book.replicasCounted(owner, part, len(replicas), true)
	return nil
}

// valueDrills keeps drill reports in the store's named values.
type valueDrills struct {
	st   store.ValueStore
	book *regionBook
}

const drillsKey = "federation/drills"

func (v valueDrills) LoadDrills(ctx context.Context) ([]*pb.Drill, error) {
	data, err := v.st.GetValue(ctx, drillsKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list pb.ListDrillsResponse
	if err := proto.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("decode drills: %w", err)
	}
	return list.Drills, nil
}

func (v valueDrills) SaveDrills(ctx context.Context, drills []*pb.Drill) error {
	data, err := proto.Marshal(&pb.ListDrillsResponse{Drills: drills})
	if err != nil {
		return err
	}
	if err := v.st.PutValue(ctx, drillsKey, data); err != nil {
		return err
	}
	v.book.drillsSaved(drills)
	return nil
}
