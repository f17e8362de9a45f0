package main

import (
	"context"
	"errors"
	"fmt"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/store"
	"google.golang.org/protobuf/proto"
)

// valueReplicas keeps a region's replicas of other regions' jobs in its
// store's named values, one value per owner region.
type valueReplicas struct {
	st   store.ValueStore
	book *regionBook
}

func (v valueReplicas) key(owner string) string { return "federation/replicas/" + owner }

func (v valueReplicas) Load(ctx context.Context, owner string) ([]*pb.Replica, error) {
	data, err := v.st.GetValue(ctx, v.key(owner))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list pb.ListReplicasResponse
	if err := proto.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("decode replicas of %s: %w", owner, err)
	}
	return list.Replicas, nil
}

func (v valueReplicas) Save(ctx context.Context, owner string, replicas []*pb.Replica) error {
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: replicas})
	if err != nil {
		return err
	}
	if err := v.st.PutValue(ctx, v.key(owner), data); err != nil {
		return err
	}
	v.book.replicasSaved(owner, len(replicas))
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
