package federation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"google.golang.org/protobuf/proto"
)

// The federation keeps its records in the region's store, as named values:
//
//	federation/replicas/<owner>/<part>  one part of the replicas held for owner (pb.ListReplicasResponse)
//	federation/replicas/<owner>         every part in one value, as earlier versions kept them:
//	                                    moved into the parts when first read, then emptied
//	federation/drills                   the drill reports started here (pb.ListDrillsResponse)
//
// Each keeps the figures the region's metrics report: how many replicas of
// each owner it holds and when they last arrived; the drills by state.
const (
	replicasKeyPrefix = "federation/replicas/"
	drillsKey         = "federation/drills"
)

// ValueReplicas is the ReplicaStore of a region: ReplicaParts named values
// per owner region in the region's store. A store written by an earlier
// version holds each owner's replicas in one value: the first read of a
// part not saved yet moves that list into the parts.
type ValueReplicas struct {
	st    store.RecordStore
	clock clock.Clock

	mu     sync.Mutex
	counts map[string]*ownerReplicas
}

var _ ReplicaStore = (*ValueReplicas)(nil)

// ownerReplicas is what ValueReplicas saw of one owner's replicas.
type ownerReplicas struct {
	parts [ReplicaParts]int // replicas in each part when last read or written
	saved time.Time         // when replicas last arrived; zero: none since start
}

// ReplicaCount is what a region holds of one owner's replicas, as far as
// the parts read or written since it started show.
type ReplicaCount struct {
	Owner    string
	Replicas int
	// Saved is when replicas of the owner last arrived (zero: none since
	// the start, only read).
	Saved time.Time
}

// NewValueReplicas keeps replicas in st; clk dates their arrival.
func NewValueReplicas(st store.RecordStore, clk clock.Clock) *ValueReplicas {
	return &ValueReplicas{st: st, clock: clk, counts: map[string]*ownerReplicas{}}
}

func ownerKey(owner string) string { return replicasKeyPrefix + owner }

func partKey(owner string, part int) string { return ownerKey(owner) + "/" + strconv.Itoa(part) }

// Load returns one part of owner's replicas (none if never saved).
func (v *ValueReplicas) Load(ctx context.Context, owner string, part int) ([]*pb.Replica, error) {
	list, err := v.read(ctx, partKey(owner, part))
	if errors.Is(err, store.ErrNotFound) {
		list, err = v.moveOneList(ctx, owner, part)
	}
	if err != nil {
		return nil, fmt.Errorf("replicas of %s, part %d: %w", owner, part, err)
	}
	v.counted(owner, part, len(list), false)
	return list, nil
}

// Save replaces one part of owner's replicas.
func (v *ValueReplicas) Save(ctx context.Context, owner string, part int, replicas []*pb.Replica) error {
	if err := v.write(ctx, partKey(owner, part), replicas); err != nil {
		return err
	}
	v.counted(owner, part, len(replicas), true)
	return nil
}

// moveOneList moves owner's replicas kept in one value, as an earlier
// version kept them, into the parts not saved yet (each of them written,
// empty or not, so that none is looked for there again), then empties
// that value. A part saved already (a move cut short leaves some) is newer
// than the old list and kept. It returns the replicas of part.
func (v *ValueReplicas) moveOneList(ctx context.Context, owner string, part int) ([]*pb.Replica, error) {
	old, err := v.read(ctx, ownerKey(owner))
	if errors.Is(err, store.ErrNotFound) || err == nil && len(old) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	parts := make([][]*pb.Replica, ReplicaParts)
	for _, r := range old {
		p := ReplicaPart(r.GetJob().GetId())
		parts[p] = append(parts[p], r)
	}
	for p, list := range parts {
		if err := v.writeIfAbsent(ctx, partKey(owner, p), list); err != nil {
			return nil, err
		}
	}
	if err := v.write(ctx, ownerKey(owner), nil); err != nil {
		return nil, err
	}
	return parts[part], nil
}

// writeIfAbsent writes replicas under key unless a value is there.
func (v *ValueReplicas) writeIfAbsent(ctx context.Context, key string, replicas []*pb.Replica) error {
	_, err := kinds.GetValue(ctx, v.st, key)
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return v.write(ctx, key, replicas)
}

func (v *ValueReplicas) read(ctx context.Context, key string) ([]*pb.Replica, error) {
	data, err := kinds.GetValue(ctx, v.st, key)
	if err != nil {
		return nil, err
	}
	var list pb.ListReplicasResponse
	if err := proto.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	return list.Replicas, nil
}

func (v *ValueReplicas) write(ctx context.Context, key string, replicas []*pb.Replica) error {
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: replicas})
	if err != nil {
		return err
	}
	return kinds.PutValue(ctx, v.st, key, data)
}

// counted records how many replicas one part of owner's list holds;
// saved says they just arrived.
func (v *ValueReplicas) counted(owner string, part, n int, saved bool) {
	if part < 0 || part >= ReplicaParts {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.counts[owner]
	if c == nil {
		c = &ownerReplicas{}
		v.counts[owner] = c
	}
	c.parts[part] = n
	if saved {
		c.saved = v.clock.Now()
	}
}

// Counts says, by owner in name order, how many replicas are kept here and
// when they last arrived.
func (v *ValueReplicas) Counts() []ReplicaCount {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]ReplicaCount, 0, len(v.counts))
	for owner, c := range v.counts {
		n := 0
		for _, p := range c.parts {
			n += p
		}
		out = append(out, ReplicaCount{Owner: owner, Replicas: n, Saved: c.saved})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Owner < out[j].Owner })
	return out
}

// ValueDrills is the DrillStore of a region: every drill report in one
// named value of the region's store.
type ValueDrills struct {
	st store.RecordStore

	mu      sync.Mutex
	byState map[string]int
}

var _ DrillStore = (*ValueDrills)(nil)

// NewValueDrills keeps drill reports in st.
func NewValueDrills(st store.RecordStore) *ValueDrills {
	return &ValueDrills{st: st, byState: map[string]int{}}
}

// LoadDrills returns the drill reports (none if never saved).
func (v *ValueDrills) LoadDrills(ctx context.Context) ([]*pb.Drill, error) {
	data, err := kinds.GetValue(ctx, v.st, drillsKey)
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

// SaveDrills replaces the drill reports.
func (v *ValueDrills) SaveDrills(ctx context.Context, drills []*pb.Drill) error {
	data, err := proto.Marshal(&pb.ListDrillsResponse{Drills: drills})
	if err != nil {
		return err
	}
	if err := kinds.PutValue(ctx, v.st, drillsKey, data); err != nil {
		return err
	}
	m := map[string]int{}
	for _, d := range drills {
		m[d.State]++
	}
	v.mu.Lock()
	v.byState = m
	v.mu.Unlock()
	return nil
}

// ByState counts the drills by state (running: in progress) as last saved
// here.
func (v *ValueDrills) ByState() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.byState)
}
