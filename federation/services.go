package federation

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/shard/model"
	"sync"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func (r *Router) CreateJob(ctx context.Context, req *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	if routed(ctx) || req.GetSpec() == nil {
		return r.shard().CreateJob(ctx, req)
	}
	region := req.Spec.Region
	if region == "" && r.choose != nil && len(r.dir.Regions()) > 1 {
		var why []string
		var err error
		if region, why, err = r.choose(ctx, req.Spec); err != nil {
			return nil, status.Errorf(codes.FailedPrecondition, "no region can take the job: %v (%s)", err, strings.Join(why, "; "))
		}
	}
	if region == "" {
		region = r.dir.Local()
	}
	reg, isLocal, err := r.target(region)
	if err != nil {
		return nil, err
	}
	servedBy(ctx, region)
	var resp *pb.CreateJobResponse
	if isLocal {
		resp, err = r.shard().CreateJob(ctx, req)
	} else {
		var c *grpc.ClientConn
		if c, err = r.conn(reg); err == nil {
			resp, err = pb.NewJobServiceClient(c).CreateJob(outgoing(ctx), req)
		}
	}
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

func (r *Router) GetJob(ctx context.Context, req *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	return jobCall(r, ctx, req.Id, req, r.shard().GetJob, func(c *grpc.ClientConn) func(context.Context, *pb.GetJobRequest, ...grpc.CallOption) (*pb.GetJobResponse, error) {
		return pb.NewJobServiceClient(c).GetJob
	})
}

func (r *Router) StopJob(ctx context.Context, req *pb.StopJobRequest) (*pb.StopJobResponse, error) {
	return jobCall(r, ctx, req.Id, req, r.shard().StopJob, func(c *grpc.ClientConn) func(context.Context, *pb.StopJobRequest, ...grpc.CallOption) (*pb.StopJobResponse, error) {
		return pb.NewJobServiceClient(c).StopJob
	})
}

func (r *Router) DeleteJob(ctx context.Context, req *pb.DeleteJobRequest) (*pb.DeleteJobResponse, error) {
	resp, err := jobCall(r, ctx, req.Id, req, r.shard().DeleteJob, func(c *grpc.ClientConn) func(context.Context, *pb.DeleteJobRequest, ...grpc.CallOption) (*pb.DeleteJobResponse, error) {
		return pb.NewJobServiceClient(c).DeleteJob
	})
	if err == nil {
		r.forget(req.Id)
	}
	return resp, err
}

func (r *Router) ListTasks(ctx context.Context, req *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().ListTasks, func(c *grpc.ClientConn) func(context.Context, *pb.ListTasksRequest, ...grpc.CallOption) (*pb.ListTasksResponse, error) {
		return pb.NewTaskServiceClient(c).ListTasks
	})
}

func (r *Router) GetTask(ctx context.Context, req *pb.GetTaskRequest) (*pb.GetTaskResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().GetTask, func(c *grpc.ClientConn) func(context.Context, *pb.GetTaskRequest, ...grpc.CallOption) (*pb.GetTaskResponse, error) {
		return pb.NewTaskServiceClient(c).GetTask
	})
}

func (r *Router) GetTaskLogs(ctx context.Context, req *pb.GetTaskLogsRequest) (*pb.GetTaskLogsResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().GetTaskLogs, func(c *grpc.ClientConn) func(context.Context, *pb.GetTaskLogsRequest, ...grpc.CallOption) (*pb.GetTaskLogsResponse, error) {
		return pb.NewTaskServiceClient(c).GetTaskLogs
	})
}

func (r *Router) StopTasks(ctx context.Context, req *pb.StopTasksRequest) (*pb.StopTasksResponse, error) {
	return jobCall(r, ctx, req.JobId, req, r.shard().StopTasks, func(c *grpc.ClientConn) func(context.Context, *pb.StopTasksRequest, ...grpc.CallOption) (*pb.StopTasksResponse, error) {
		return pb.NewTaskServiceClient(c).StopTasks
	})
}

// peerCallTimeout bounds each call of a fan-out to another region.
const peerCallTimeout = 3 * time.Second

// fanOut runs a call on the local shard and every reachable peer and
// returns the answers by region; regions that fail are reported apart.
func fanOut[Resp any](r *Router, ctx context.Context, local func(context.Context) (Resp, error), remote func(context.Context, *grpc.ClientConn) (Resp, error)) (map[string]Resp, map[string]error) {
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
			resp, err := remote(outgoing(cctx), c)
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

func (r *Router) ListJobs(ctx context.Context, req *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListJobsResponse, error) { return r.shard().ListJobs(ctx, req) },
		func(ctx context.Context, c *grpc.ClientConn) (*pb.ListJobsResponse, error) {
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
		for _, j := range answers[region].GetJobs() {
			if !seen[j.GetId()] {
				seen[j.GetId()] = true
				out.Jobs = append(out.Jobs, j)
				r.remember(j.GetId(), region)
			}
		}
	}
	// Every region answered one page after the same token: the first
	// page's worth of their union is the page, its last job the next token.
	out.Jobs, out.NextPageToken = pb.MergeJobPage(out.Jobs, req.GetLimit(), more)
	return out, nil
}

func (r *Router) ListHosts(ctx context.Context, req *pb.ListHostsRequest) (*pb.ListHostsResponse, error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListHostsResponse, error) { return r.shard().ListHosts(ctx, req) },
		func(ctx context.Context, c *grpc.ClientConn) (*pb.ListHostsResponse, error) {
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

// ListHostPools gathers the host pools of every reachable region (each
// region's host pools are its own); recent moves are merged newest first.
func (r *Router) ListHostPools(ctx context.Context, req *pb.ListHostPoolsRequest) (*pb.ListHostPoolsResponse, error) {
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListHostPoolsResponse, error) { return r.shard().ListHostPools(ctx, req) },
		func(ctx context.Context, c *grpc.ClientConn) (*pb.ListHostPoolsResponse, error) {
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

func (r *Router) ListRegions(ctx context.Context, req *pb.ListRegionsRequest) (*pb.ListRegionsResponse, error) {
	answers, _ := fanOut(r, ctx, func(ctx context.Context) (*pb.ListRegionsResponse, error) { return r.shard().ListRegions(ctx, req) },
		func(ctx context.Context, c *grpc.ClientConn) (*pb.ListRegionsResponse, error) {
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
		if reg.Health != "" {
			got.Health = reg.Health
		}
		out.Regions = append(out.Regions, got)
	}
	sort.Slice(out.Regions, func(i, j int) bool { return out.Regions[i].Name < out.Regions[j].Name })
	return out, nil
}

// Pools are defined once for the federation: writes go to every reachable
// region, the local one first so that a bad spec is refused before any
// region changed.
func (r *Router) CreatePool(ctx context.Context, req *pb.CreatePoolRequest) (*pb.CreatePoolResponse, error) {
	resp, err := r.shard().CreatePool(ctx, req)
	if err != nil || routed(ctx) {
		return resp, err
	}
	return resp, r.everywhere(ctx, func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewPoolServiceClient(c).CreatePool(ctx, req)
		if status.Code(err) == codes.AlreadyExists {
			err = nil
		}
		return err
	})
}

func (r *Router) UpdatePool(ctx context.Context, req *pb.UpdatePoolRequest) (*pb.UpdatePoolResponse, error) {
	resp, err := r.shard().UpdatePool(ctx, req)
	if err != nil || routed(ctx) {
		return resp, err
	}
	return resp, r.everywhere(ctx, func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewPoolServiceClient(c).UpdatePool(ctx, req)
		return err
	})
}

func (r *Router) DeletePool(ctx context.Context, req *pb.DeletePoolRequest) (*pb.DeletePoolResponse, error) {
	resp, err := r.shard().DeletePool(ctx, req)
	if err != nil || routed(ctx) {
		return resp, err
	}
	return resp, r.everywhere(ctx, func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewPoolServiceClient(c).DeletePool(ctx, req)
		if status.Code(err) == codes.NotFound {
			err = nil
		}
		return err
	})
}

// everywhere applies a write to every reachable peer and reports the
// regions where it failed.
func (r *Router) everywhere(ctx context.Context, call func(context.Context, *grpc.ClientConn) error) error {
	_, errs := fanOut(r, ctx, func(context.Context) (struct{}, error) { return struct{}{}, nil },
		func(ctx context.Context, c *grpc.ClientConn) (struct{}, error) { return struct{}{}, call(ctx, c) })
	if len(errs) == 0 {
		return nil
	}
	var msgs []string
	for _, region := range sortedKeys(errs) {
		msgs = append(msgs, fmt.Sprintf("%s: %s", region, status.Convert(errs[region]).Message()))
	}
	return status.Errorf(codes.Unavailable, "applied here but not in every region (%v); retry to converge", msgs)
}

func (r *Router) ListPools(ctx context.Context, req *pb.ListPoolsRequest) (*pb.ListPoolsResponse, error) {
	return r.shard().ListPools(ctx, req)
}

func (r *Router) GetPool(ctx context.Context, req *pb.GetPoolRequest) (*pb.GetPoolResponse, error) {
	resp, err := r.shard().GetPool(ctx, req)
	if err != nil || !req.Regions || routed(ctx) {
		return resp, err
	}
	// The global pass: the pool's reservation and limit split among the
	// regions by their demand and capacity.
	states, pools := r.collectStates(ctx)
	shares := policy.SplitPools(pools, states, time.Now(), r.states.maxAge)
	path := resp.GetPool().GetPath()
	for _, st := range states {
		sh, ok := shares.Get(st.Name, path)
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

func (r *Router) GetVersion(ctx context.Context, req *pb.GetVersionRequest) (*pb.GetVersionResponse, error) {
	return r.shard().GetVersion(ctx, req)
}

// Watch follows one job in its region, or every region's events.
func (r *Router) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.Event]) error {
	ctx := stream.Context()
	if routed(ctx) {
		return r.shard().Watch(req, stream)
	}
	if req.JobId != "" {
		region, err := r.owner(ctx, req.JobId)
		if err != nil {
			return err
		}
		reg, isLocal, err := r.target(region)
		if err != nil {
			return err
		}
		if isLocal {
			return r.shard().Watch(req, stream)
		}
		return r.relay(ctx, reg, req, stream, nil)
	}
	// Every region: merge the streams; sequence numbers are per region.
	var mu sync.Mutex
	send := func(ev *pb.Event) error {
		mu.Lock()
		defer mu.Unlock()
		return stream.Send(ev)
	}
	errc := make(chan error, len(r.peers())+1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { errc <- r.shard().Watch(req, &lockedStream{ServerStreamingServer: stream, send: send}) }()
	for _, reg := range r.peers() {
		go func() { errc <- r.relay(ctx, reg, req, stream, send) }()
	}
	return <-errc
}

// relay forwards a peer region's event stream.
func (r *Router) relay(ctx context.Context, reg Region, req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.Event], send func(*pb.Event) error) error {
	if send == nil {
		send = stream.Send
	}
	c, err := r.conn(reg)
	if err != nil {
		return err
	}
	in, err := pb.NewEventServiceClient(c).Watch(outgoing(ctx), req)
	if err != nil {
		return err
	}
	for {
		ev, err := in.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := send(ev); err != nil {
			return err
		}
	}
}

// lockedStream serialises sends of several relays onto one stream.
type lockedStream struct {
	grpc.ServerStreamingServer[pb.Event]
	send func(*pb.Event) error
}

func (s *lockedStream) Send(ev *pb.Event) error { return s.send(ev) }
