package federation

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"sync"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ReplicaStore keeps the replicas a region holds for other regions: for
// each owner region, ReplicaParts lists, a job's replica in the list
// ReplicaPart of its id. A put rewrites one part, so the cost of keeping a
// replica grows with the owner's jobs divided by ReplicaParts, not with
// all of them.
type ReplicaStore interface {
	// Load returns one part of owner's replicas (none if never saved).
	Load(ctx context.Context, owner string, part int) ([]*pb.Replica, error)
	// Save replaces one part of owner's replicas.
	Save(ctx context.Context, owner string, part int, replicas []*pb.Replica) error
}

// ReplicaParts is how many lists an owner's replicas are kept in.
const ReplicaParts = 64

// ReplicaPart is the list a job's replica is kept in: FNV-1a of its id.
func ReplicaPart(job string) int {
	h := fnv.New32a()
	h.Write([]byte(job))
	return int(h.Sum32() % ReplicaParts)
}

// replicaBook serialises read-modify-write of the replica lists. A put
// that arrives while a list is being written waits, and is written with
// the other puts queued for its owner in one read and one write of each
// part they fall in: under a burst of routed jobs a part is rewritten once
// per batch, not once per job.
type replicaBook struct {
	mu    sync.Mutex // held while a list is read, changed and written
	store ReplicaStore

	qmu    sync.Mutex
	queued map[string][]queuedPut // by owner region
}

type queuedPut struct {
	rep  *pb.Replica
	done chan error
}

// put inserts or replaces a replica by job id.
func (b *replicaBook) put(ctx context.Context, rep *pb.Replica) error {
	owner := rep.GetOwnerRegion()
	done := make(chan error, 1)
	b.qmu.Lock()
	if b.queued == nil {
		b.queued = map[string][]queuedPut{}
	}
	b.queued[owner] = append(b.queued[owner], queuedPut{rep: rep, done: done})
	b.qmu.Unlock()

	b.mu.Lock()
	b.qmu.Lock()
	batch := b.queued[owner]
	delete(b.queued, owner)
	b.qmu.Unlock()
	if len(batch) > 0 { // else an earlier writer took this put with its own
		// The batch carries other callers' puts: one caller giving up
		// does not fail them.
		err := b.write(context.WithoutCancel(ctx), owner, batch)
		for _, p := range batch {
			p.done <- err
		}
	}
	b.mu.Unlock()
	return <-done
}

// write applies a batch of puts, in order, to owner's lists, one part
// after another; b.mu is held.
func (b *replicaBook) write(ctx context.Context, owner string, batch []queuedPut) error {
	parts := map[int][]queuedPut{}
	for _, p := range batch {
		part := ReplicaPart(p.rep.GetJob().GetId())
		parts[part] = append(parts[part], p)
	}
	var errs []error
	for _, part := range slices.Sorted(maps.Keys(parts)) {
		if err := b.writePart(ctx, owner, part, parts[part]); err != nil {
			errs = append(errs, fmt.Errorf("replicas of %s, part %d: %w", owner, part, err))
		}
	}
	return errors.Join(errs...)
}

// writePart applies puts, in order, to one part of owner's list.
func (b *replicaBook) writePart(ctx context.Context, owner string, part int, batch []queuedPut) error {
	list, err := b.store.Load(ctx, owner, part)
	if err != nil {
		return err
	}
	at := make(map[string]int, len(list))
	for i, r := range list {
		at[r.GetJob().GetId()] = i
	}
	gone := map[string]bool{}
	for _, p := range batch {
		rep := p.rep
		id := rep.GetJob().GetId()
		i, ok := at[id]
		if rep.GetDeleted() {
			// The owner deleted the job: forget it, unless it moved (the
			// owner stops its copy on its return by that record).
			if ok && list[i].GetRelocatedRegion() == "" {
				gone[id] = true
			}
			continue
		}
		if !ok {
			at[id] = len(list)
			list = append(list, rep)
			continue
		}
		old := list[i]
		// A relocation recorded here is kept when the owner updates the
		// succeeded instances.
		if rep.RelocatedRegion == "" {
			rep.RelocatedRegion, rep.RelocatedJobId, rep.RelocatedTime = old.RelocatedRegion, old.RelocatedJobId, old.RelocatedTime
		}
		// Progress updates from the owner carry no failover policy: the
		// spec as submitted is kept.
		if rep.GetJob().GetSpec().GetFailover() == nil && old.GetJob().GetSpec() != nil {
			rep.Job.Spec = old.Job.Spec
		}
		list[i] = rep
	}
	if len(gone) > 0 {
		list = slices.DeleteFunc(list, func(r *pb.Replica) bool { return gone[r.GetJob().GetId()] })
	}
	sort.Slice(list, func(i, j int) bool { return list[i].GetJob().GetId() < list[j].GetJob().GetId() })
	return b.store.Save(ctx, owner, part, list)
}

// list returns all of owner's replicas, ordered by job id.
func (b *replicaBook) list(ctx context.Context, owner string) ([]*pb.Replica, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*pb.Replica
	for part := range ReplicaParts {
		list, err := b.store.Load(ctx, owner, part)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetJob().GetId() < out[j].GetJob().GetId() })
	return out, nil
}

// SetReplicaStore enables job replication: the router keeps copies of
// other regions' jobs in st and sends copies of its own to a peer.
func (r *Router) SetReplicaStore(st ReplicaStore) { r.replicas = &replicaBook{store: st} }

func (r *Router) PutReplica(ctx context.Context, req *pb.PutReplicaRequest) (*pb.PutReplicaResponse, error) {
	if r.replicas == nil {
		return nil, status.Error(codes.FailedPrecondition, "this region keeps no replicas")
	}
	rep := req.GetReplica()
	if rep.GetJob().GetId() == "" || rep.GetOwnerRegion() == "" {
		return nil, status.Error(codes.InvalidArgument, "replica.job.id and replica.owner_region: required")
	}
	if rep.GetOwnerRegion() == r.dir.Local() {
		return nil, status.Errorf(codes.InvalidArgument, "replica.owner_region: %s cannot hold a replica of its own job", rep.GetOwnerRegion())
	}
	rep.UpdateTime = timestamppb.Now()
	if err := r.replicas.put(ctx, rep); err != nil {
		return nil, status.Errorf(codes.Unavailable, "store replica: %v", err)
	}
	return &pb.PutReplicaResponse{}, nil
}

func (r *Router) ListReplicas(ctx context.Context, req *pb.ListReplicasRequest) (*pb.ListReplicasResponse, error) {
	if r.replicas == nil {
		return &pb.ListReplicasResponse{}, nil
	}
	owners := []string{req.GetOwnerRegion()}
	if owners[0] == "" {
		owners = owners[:0]
		for _, reg := range r.dir.Regions() {
			if reg.Name != r.dir.Local() {
				owners = append(owners, reg.Name)
			}
		}
	}
	out := &pb.ListReplicasResponse{}
	if o := req.GetOwnerRegion(); o != "" {
		// Health first, then whether a relocation pass runs, then the
		// replicas (relocations.begin explains the order).
		out.OwnerHealth = r.health(o)
		out.Relocating = r.relocating.active(o)
	}
	for _, o := range owners {
		list, err := r.replicas.list(ctx, o)
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "load replicas: %v", err)
		}
		for _, rep := range list {
			if (req.GetJobId() == "" || rep.GetJob().GetId() == req.GetJobId()) &&
				(!req.GetRelocatedOnly() || rep.GetRelocatedRegion() != "") {
				out.Replicas = append(out.Replicas, rep)
			}
		}
	}
	return out, nil
}

// relocations marks the failed regions whose jobs this region is
// relocating, so that the owner, coming back, does not take an answer
// given in the middle of a pass for the last word.
type relocations struct {
	mu      sync.Mutex
	regions map[string]int
}

// begin marks a relocation pass over failed's jobs, then reads failed's
// health: the pass goes on only while it is failed (else begin unmarks
// and says no). ListReplicas reads the health, then the mark, then the
// replicas, so an answer that says alive and not relocating was given
// either before the mark (the pass reads alive and relocates nothing:
// health changes from alive only after a new silence) or after the pass
// ended (its relocations are stored, and listed).
func (l *relocations) begin(failed string, health func(string) string) bool {
	l.mu.Lock()
	if l.regions == nil {
		l.regions = map[string]int{}
	}
	l.regions[failed]++
	l.mu.Unlock()
	if health(failed) == "failed" {
		return true
	}
	l.end(failed)
	return false
}

func (l *relocations) end(failed string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.regions[failed]--; l.regions[failed] <= 0 {
		delete(l.regions, failed)
	}
}

func (l *relocations) active(owner string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.regions[owner] > 0
}

// forgetReplica tells every region that may hold a replica of owner's
// job (each region but owner that is not failed here: a replica moves when
// owner's replica region changes) that owner deleted it, so that no
// replica outlives it. A failure is reported, not returned: the job is
// gone either way, and a replica is only kept longer.
func (r *Router) forgetReplica(ctx context.Context, owner, job string) {
	if r.replicas == nil || owner == "" {
		return
	}
	for _, reg := range r.dir.Regions() {
		if reg.Name == owner || reg.Health == "failed" || reg.Addr == "" && reg.Name != r.dir.Local() {
			continue
		}
		if err := r.putReplicaIn(ctx, reg, &pb.Replica{Job: &pb.Job{Id: job}, OwnerRegion: owner, Deleted: true}); err != nil {
			r.reportError("replicas", "the replica of a deleted job was not forgotten", err, "job", job, "replica_region", reg.Name)
		}
	}
}

// putReplicaIn puts a replica in region reg: this router's own book when
// reg is the local region, else reg's router, waiting at most
// peerCallTimeout for it.
func (r *Router) putReplicaIn(ctx context.Context, reg Region, rep *pb.Replica) error {
	req := &pb.PutReplicaRequest{Replica: rep}
	if reg.Name == r.dir.Local() {
		_, err := r.PutReplica(ctx, req)
		return err
	}
	c, err := r.conn(reg)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
	defer cancel()
	_, err = pb.NewFederationServiceClient(c).PutReplica(cctx, req)
	return err
}

// replicaRegion is where a region's jobs are copied: the first region
// after it by name that is alive, wrapping around.
func (r *Router) replicaRegion(owner string) (Region, bool) {
	regions := r.dir.Regions()
	sort.Slice(regions, func(i, j int) bool { return regions[i].Name < regions[j].Name })
	start := 0
	for i, reg := range regions {
		if reg.Name == owner {
			start = i
		}
	}
	for k := 1; k < len(regions); k++ {
		reg := regions[(start+k)%len(regions)]
		if reg.Name != owner && reg.Health == "alive" && reg.Addr != "" {
			return reg, true
		}
	}
	return Region{}, false
}

// defaultFailover fills a job's failover policy: jobs pinned to a region
// stay with it, jobs the federation placed may move anywhere.
func defaultFailover(spec *pb.JobSpec, pinned bool) *pb.FailoverPolicy {
	if f := spec.GetFailover(); f != nil && f.GetMode() != pb.FailoverPolicy_MODE_UNSPECIFIED {
		return f
	}
	// A job pinned to its region stays there; so do stateful jobs (their
	// volumes do not follow) and daemon jobs (they belong to the region's
	// hosts), unless their spec asks otherwise.
	if pinned || spec.GetType() == pb.JobType_JOB_TYPE_STATEFUL || spec.GetType() == pb.JobType_JOB_TYPE_DAEMON {
		return &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_NONE}
	}
	return &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_ANY}
}

// replicate sends a copy of a job accepted by owner to its replica region.
func (r *Router) replicate(ctx context.Context, owner string, job *pb.Job, succeeded []uint32) (string, error) {
	reg, ok := r.replicaRegion(owner)
	if !ok {
		return "", fmt.Errorf("no other region is alive to hold a replica")
	}
	rep := &pb.Replica{Job: proto.Clone(job).(*pb.Job), OwnerRegion: owner, Succeeded: succeeded}
	if err := r.putReplicaIn(ctx, reg, rep); err != nil {
		return "", err
	}
	return reg.Name, nil
}

var _ pb.FederationServiceServer = (*Router)(nil)

func registerFederation(g *grpc.Server, r *Router) { pb.RegisterFederationServiceServer(g, r) }

// daemonSpec makes a re-created daemon job's spec valid: a daemon runs one
// instance per matching host of its new region and takes no count.
func daemonSpec(ns *pb.JobSpec) {
	if ns.GetType() == pb.JobType_JOB_TYPE_DAEMON {
		ns.Instances, ns.MaxRunning = 0, 0
	}
}
