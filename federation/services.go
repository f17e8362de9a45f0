package federation

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"sync"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/gossip"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// CreateJob places a job in the region its spec names, else in the one
// the chooser picks (a retry, where its first attempt went), and sends a
// copy to its replica region.
func (r *Router) CreateJob(ctx context.Context, req *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	if routed(ctx) || req.GetSpec() == nil {
		return pb.NewJobServiceClient(r.local()).CreateJob(ctx, req)
	}
	region, err := r.regionFor(ctx, req.RequestId, 0, req.Spec)
	if err != nil {
		return nil, err
	}
	cc, _, err := r.regionConn(ctx, region)
	if err != nil {
		return nil, err
	}
	resp, err := pb.NewJobServiceClient(cc).CreateJob(ctx, req)
	if err != nil {
		return nil, err
	}
	r.remember(resp.GetJob().GetId(), region)
	if r.replicas != nil {
		// The replica keeps the spec as submitted, with its failover policy.
		job := proto.Clone(resp.GetJob()).(*pb.Job)
		job.Spec = proto.Clone(req.Spec).(*pb.JobSpec)
		job.Spec.Failover = defaultFailover(req.Spec, req.Spec.Region != "")
		job.Spec.Region = region
		if at, err := r.replicate(ctx, region, job, nil); err != nil {
			r.log("job accepted without a replica", "job", job.GetId(), "err", err)
		} else {
			r.log("job replicated", "job", job.GetId(), "replica_region", at)
		}
	}
	return resp, nil
}

// deleteJob forwards like any job call, forgets where the job was, and
// has its replica forgotten.
func (r *Router) deleteJob(ctx context.Context, req *pb.DeleteJobRequest) (*pb.DeleteJobResponse, error) {
	resp, err := r.forward(ctx, methods[pb.JobService_DeleteJob_FullMethodName], req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	owner := r.owners[req.Id]
	r.mu.Unlock()
	r.forget(req.Id)
	if !routed(ctx) {
		r.forgetReplica(ctx, owner, req.Id)
	}
	return resp.(*pb.DeleteJobResponse), nil
}

// peerCallTimeout bounds each call of a fan-out to another region.
const peerCallTimeout = 3 * time.Second

// fanOut runs a call on the local shard and every reachable peer and
// returns the answers by region; regions that fail are reported apart.
func fanOut[Resp any](r *Router, ctx context.Context, local func(context.Context) (Resp, error), remote func(context.Context, grpc.ClientConnInterface) (Resp, error)) (map[string]Resp, map[string]error) {
	out := map[string]Resp{}
	errs := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	put := func(region string, resp Resp, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs[region] = err
			return
		}
		out[region] = resp
	}
	resp, err := local(ctx)
	put(r.dir.Local(), resp, err)
	if routed(ctx) {
		return out, errs
	}
	for _, reg := range r.peers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := r.conn(reg)
			if err != nil {
				put(reg.Name, *new(Resp), err)
				return
			}
			// A region cut off the network does not refuse connections, it
			// stays silent: never wait on it for long.
			cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
			defer cancel()
			resp, err := remote(cctx, c)
			put(reg.Name, resp, err)
		}()
	}
	wg.Wait()
	return out, errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (r *Router) listJobs(ctx context.Context, req *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListJobsResponse, error) {
		return pb.NewJobServiceClient(r.local()).ListJobs(ctx, req)
	},
		func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListJobsResponse, error) {
			return pb.NewJobServiceClient(c).ListJobs(ctx, req)
		})
	if err := errs[r.dir.Local()]; err != nil {
		return nil, err
	}
	out := &pb.ListJobsResponse{}
	seen := map[string]bool{}
	more := false
	for _, region := range sortedKeys(answers) {
		more = more || answers[region].GetNextPageToken() != ""
		out.Total += answers[region].GetTotal()
		for st, n := range answers[region].GetTaskStates() {
			if out.TaskStates == nil {
				out.TaskStates = map[string]uint32{}
			}
			out.TaskStates[st] += n
		}
		for _, j := range answers[region].GetJobs() {
			if !seen[j.GetId()] {
				seen[j.GetId()] = true
				if st := j.GetStatus(); st != nil {
					st.MovedFrom = movedFrom(j.GetSpec().GetLabels())
				}
				out.Jobs = append(out.Jobs, j)
				r.remember(j.GetId(), region)
			}
		}
	}
	// Every region answered one page in the asked order after the same
	// token: the first page's worth of their union is the page, its last
	// job the next token. Totals add up.
	out.Jobs, out.NextPageToken = pb.MergeJobPageFor(out.Jobs, req.GetLimit(), more, req.GetOrder())
	return out, nil
}

func (r *Router) listHosts(ctx context.Context, req *pb.ListHostsRequest) (*pb.ListHostsResponse, error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListHostsResponse, error) {
		return pb.NewHostServiceClient(r.local()).ListHosts(ctx, req)
	},
		func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListHostsResponse, error) {
			return pb.NewHostServiceClient(c).ListHosts(ctx, req)
		})
	if err := errs[r.dir.Local()]; err != nil {
		return nil, err
	}
	out := &pb.ListHostsResponse{}
	for _, region := range sortedKeys(answers) {
		out.Hosts = append(out.Hosts, answers[region].GetHosts()...)
	}
	return out, nil
}

// listHostPools gathers the host pools of every reachable region (each
// region's host pools are its own); recent moves are merged newest first.
func (r *Router) listHostPools(ctx context.Context, req *pb.ListHostPoolsRequest) (*pb.ListHostPoolsResponse, error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListHostPoolsResponse, error) {
		return pb.NewHostServiceClient(r.local()).ListHostPools(ctx, req)
	},
		func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListHostPoolsResponse, error) {
			return pb.NewHostServiceClient(c).ListHostPools(ctx, req)
		})
	if err := errs[r.dir.Local()]; err != nil {
		return nil, err
	}
	out := &pb.ListHostPoolsResponse{}
	for _, region := range sortedKeys(answers) {
		out.HostPools = append(out.HostPools, answers[region].GetHostPools()...)
		out.RecentMoves = append(out.RecentMoves, answers[region].GetRecentMoves()...)
	}
	slices.SortStableFunc(out.RecentMoves, func(a, b *pb.HostPoolMove) int {
		return b.GetTime().AsTime().Compare(a.GetTime().AsTime())
	})
	return out, nil
}

func (r *Router) listRegions(ctx context.Context, req *pb.ListRegionsRequest) (*pb.ListRegionsResponse, error) {
	answers, _ := fanOut(r, ctx, func(ctx context.Context) (*pb.ListRegionsResponse, error) {
		return pb.NewRegionServiceClient(r.local()).ListRegions(ctx, req)
	},
		func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListRegionsResponse, error) {
			return pb.NewRegionServiceClient(c).ListRegions(ctx, req)
		})
	if routed(ctx) {
		return answers[r.dir.Local()], nil
	}
	// What each region says of itself, with the health this region sees.
	out := &pb.ListRegionsResponse{}
	for _, reg := range r.dir.Regions() {
		var got *pb.Region
		for _, g := range answers[reg.Name].GetRegions() {
			if g.GetName() == reg.Name {
				got = g
			}
		}
		if got == nil {
			got = &pb.Region{Name: reg.Name}
		}
		switch {
		case !reg.LastSeen.IsZero():
			got.LastSeen = timestamppb.New(reg.LastSeen)
		case answers[reg.Name] != nil:
			// No membership (regions of one process): it answered now.
			got.LastSeen = timestamppb.Now()
		}
		if reg.Health != "" {
			got.Health = reg.Health
		}
		if len(reg.Members) > 0 {
			// Gossip's view, with suspicion, over the region's own.
			got.Members = got.Members[:0]
			for _, m := range reg.Members {
				got.Members = append(got.Members, regionMemberPB(m))
			}
		}
		out.Regions = append(out.Regions, got)
	}
	sort.Slice(out.Regions, func(i, j int) bool { return out.Regions[i].Name < out.Regions[j].Name })
	return out, nil
}

// regionMemberPB is a gossip member as ListRegions answers it, with this
// server's recent probes of it.
func regionMemberPB(m RegionMember) *pb.RegionMember {
	out := &pb.RegionMember{Name: m.Name, Address: m.Addr, Role: m.Role, Leader: m.Leader, Status: m.Status}
	if m.Probed {
		p := m.RecentProbes
		out.Probes = &pb.ProbeCounts{Sent: uint32(p.Sent), Lost: uint32(p.Lost), Failed: uint32(p.Failed),
			Window: durationpb.New(gossip.RecentProbeWindow)}
	}
	return out
}

// Pools are defined once for the federation: writes go to every reachable
// region, the local one first so that a bad spec is refused before any
// region changed.
func (r *Router) createPool(ctx context.Context, req *pb.CreatePoolRequest) (*pb.CreatePoolResponse, error) {
	resp, err := pb.NewPoolServiceClient(r.local()).CreatePool(ctx, req)
	if err != nil || routed(ctx) {
		return resp, err
	}
	return resp, r.everywhere(ctx, func(ctx context.Context, c grpc.ClientConnInterface) error {
		_, err := pb.NewPoolServiceClient(c).CreatePool(ctx, req)
		if status.Code(err) == codes.AlreadyExists {
			err = nil
		}
		return err
	})
}

func (r *Router) updatePool(ctx context.Context, req *pb.UpdatePoolRequest) (*pb.UpdatePoolResponse, error) {
	resp, err := pb.NewPoolServiceClient(r.local()).UpdatePool(ctx, req)
	if err != nil || routed(ctx) {
		return resp, err
	}
	return resp, r.everywhere(ctx, func(ctx context.Context, c grpc.ClientConnInterface) error {
		_, err := pb.NewPoolServiceClient(c).UpdatePool(ctx, req)
		return err
	})
}

func (r *Router) deletePool(ctx context.Context, req *pb.DeletePoolRequest) (*pb.DeletePoolResponse, error) {
	resp, err := pb.NewPoolServiceClient(r.local()).DeletePool(ctx, req)
	if err != nil || routed(ctx) {
		return resp, err
	}
	return resp, r.everywhere(ctx, func(ctx context.Context, c grpc.ClientConnInterface) error {
		_, err := pb.NewPoolServiceClient(c).DeletePool(ctx, req)
		if status.Code(err) == codes.NotFound {
			err = nil
		}
		return err
	})
}

// everywhere applies a write to every reachable peer and reports the
// regions where it failed.
func (r *Router) everywhere(ctx context.Context, call func(context.Context, grpc.ClientConnInterface) error) error {
	_, errs := fanOut(r, ctx, func(context.Context) (struct{}, error) { return struct{}{}, nil },
		func(ctx context.Context, c grpc.ClientConnInterface) (struct{}, error) {
			return struct{}{}, call(ctx, c)
		})
	if len(errs) == 0 {
		return nil
	}
	var msgs []string
	for _, region := range sortedKeys(errs) {
		msgs = append(msgs, fmt.Sprintf("%s: %s", region, status.Convert(errs[region]).Message()))
	}
	return status.Errorf(codes.Unavailable, "applied here but not in every region (%v); retry to converge", msgs)
}

func (r *Router) getPool(ctx context.Context, req *pb.GetPoolRequest) (*pb.GetPoolResponse, error) {
	resp, err := pb.NewPoolServiceClient(r.local()).GetPool(ctx, req)
	if err != nil || !req.Regions || routed(ctx) {
		return resp, err
	}
	// The global pass: the pool's reservation and limit split among the
	// regions by their demand and capacity.
	v := r.stateView(ctx, true)
	if v == nil {
		return nil, ctx.Err()
	}
	path := resp.GetPool().GetPath()
	for _, st := range v.states {
		sh, ok := v.shares.Get(st.Name, path)
		if !ok {
			continue
		}
		resp.Pool.Regions = append(resp.Pool.Regions, &pb.PoolRegionShare{
			Region:      st.Name,
			Reservation: toProto(sh.Reservation),
			Limit:       toProto(sh.Limit),
			Demand:      toProto(st.Pools[path].Demand),
		})
	}
	return resp, nil
}

func toProto(r model.Resources) *pb.Resources {
	out := &pb.Resources{}
	out.Cpu, out.MemMb, out.DiskMb, out.Gpu = r.Decimal()
	return out
}

// watch follows one job in its region, or every region's events merged;
// sequence numbers are per region.
func (r *Router) watch(ctx context.Context, m *method, req proto.Message, ss grpc.ServerStream) error {
	if req.(*pb.WatchRequest).JobId != "" {
		return r.forwardStream(ctx, m, req, ss)
	}
	var mu sync.Mutex
	send := func(ev any) error {
		mu.Lock()
		defer mu.Unlock()
		return ss.SendMsg(ev)
	}
	peers := r.peers()
	errc := make(chan error, len(peers)+1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { errc <- relay(ctx, r.local(), m, req, send) }()
	for _, reg := range peers {
		go func() {
			c, err := r.conn(reg)
			if err == nil {
				err = relay(ctx, c, m, req, send)
			}
			errc <- err
		}()
	}
	return <-errc
}
