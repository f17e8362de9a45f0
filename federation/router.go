package federation

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Metadata keys the router uses. A call that carries RoutedKey was already
// routed by a peer and is served by the local shard as is; every response
// carries ServedByKey, the region whose shard served it.
const (
	RoutedKey   = "peloton-routed"
	ServedByKey = "peloton-region"
)

// MaxMessageBytes bounds a message the router receives from another
// region.
const MaxMessageBytes = 64 << 20

// grpcConn is a connection to another region.
type grpcConn = *grpc.ClientConn

// Shard is the v1 API of one region's shard, served in process.
type Shard interface {
	pb.JobServiceServer
	pb.TaskServiceServer
	pb.PoolServiceServer
	pb.HostServiceServer
	pb.RegionServiceServer
	pb.EventServiceServer
	pb.SystemServiceServer
}

// Region is a region as the router sees it.
type Region struct {
	Name string
	// Addr is the gRPC address of one of the region's gateways.
	Addr string
	// Health is "alive", "suspect" or "failed".
	Health string
}

// Directory tells the router which regions exist and how to reach them.
type Directory interface {
	Local() string
	Regions() []Region
}

// Chooser picks a region for a job that does not name one.
type Chooser func(ctx context.Context, spec *pb.JobSpec) (region string, why []string, err error)

// Router serves the public API of a region: locally what belongs to it,
// forwarded what belongs to another region, fanned out what spans them.
type Router struct {
	pb.UnimplementedJobServiceServer
	pb.UnimplementedTaskServiceServer
	pb.UnimplementedPoolServiceServer
	pb.UnimplementedHostServiceServer
	pb.UnimplementedRegionServiceServer
	pb.UnimplementedEventServiceServer
	pb.UnimplementedSystemServiceServer
	pb.UnimplementedFederationServiceServer

	localMu   sync.RWMutex
	localSh   Shard
	replicas  *replicaBook
	drills    *drills
	isolation Isolation
	states    *regionStates
	log       func(msg string, args ...any)
	dir       Directory
	choose    Chooser

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn // by address
	owners map[string]string           // job id → region, learned
	// dialOpts are added to every connection to another region.
	dialOpts []grpc.DialOption
}

// AddDialOptions adds options (a metrics interceptor) to the connections
// the router opens to other regions from now on.
func (r *Router) AddDialOptions(opts ...grpc.DialOption) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dialOpts = append(r.dialOpts, opts...)
}

// NewRouter returns a router in front of the local shard. A nil chooser
// places jobs that name no region in the local region.
func NewRouter(local Shard, dir Directory, choose Chooser) *Router {
	return &Router{localSh: local, dir: dir, choose: choose, conns: map[string]*grpc.ClientConn{}, owners: map[string]string{},
		log: func(string, ...any) {}, states: &regionStates{refresh: 2 * time.Second, maxAge: time.Minute}}
}

// SetLocal replaces the region's shard: the leader's own, or, on a standby,
// the leader's reached over gRPC.
func (r *Router) SetLocal(s Shard) {
	r.localMu.Lock()
	r.localSh = s
	r.localMu.Unlock()
}

// shard returns the region's shard as it is now.
func (r *Router) shard() Shard {
	r.localMu.RLock()
	defer r.localMu.RUnlock()
	return r.localSh
}

// Register adds every service to a gRPC server.
func (r *Router) Register(g *grpc.Server) {
	pb.RegisterJobServiceServer(g, r)
	pb.RegisterTaskServiceServer(g, r)
	pb.RegisterPoolServiceServer(g, r)
	pb.RegisterHostServiceServer(g, r)
	pb.RegisterRegionServiceServer(g, r)
	pb.RegisterEventServiceServer(g, r)
	pb.RegisterSystemServiceServer(g, r)
	registerFederation(g, r)
}

// Close drops connections to other regions.
func (r *Router) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.conns = map[string]*grpc.ClientConn{}
}

func routed(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	return len(md.Get(RoutedKey)) > 0
}

// outgoing marks a forwarded call as routed.
func outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	md = md.Copy()
	delete(md, ":authority")
	md.Set(RoutedKey, "1")
	return metadata.NewOutgoingContext(ctx, md)
}

func servedBy(ctx context.Context, region string) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(ServedByKey, region))
}

// region looks a region up by name.
func (r *Router) region(name string) (Region, bool) {
	for _, reg := range r.dir.Regions() {
		if reg.Name == name {
			return reg, true
		}
	}
	return Region{}, false
}

// peers are the other regions that are not failed, by name.
func (r *Router) peers() []Region {
	var out []Region
	for _, reg := range r.dir.Regions() {
		if reg.Name != r.dir.Local() && reg.Health != "failed" && reg.Addr != "" {
			out = append(out, reg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *Router) regionNames() string {
	var names []string
	for _, reg := range r.dir.Regions() {
		names = append(names, reg.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (r *Router) conn(reg Region) (*grpc.ClientConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.conns[reg.Addr]; ok {
		return c, nil
	}
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		// Forwarded answers (a job config with an override per instance)
		// may be megabytes.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes))}, r.dialOpts...)
	c, err := grpc.NewClient(reg.Addr, opts...)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "region %s at %s: %v", reg.Name, reg.Addr, err)
	}
	r.conns[reg.Addr] = c
	return c, nil
}

// target resolves a region a call must go to: local, or a reachable peer.
func (r *Router) target(name string) (Region, bool, error) {
	if name == r.dir.Local() {
		return Region{Name: name}, true, nil
	}
	reg, ok := r.region(name)
	if !ok {
		return Region{}, false, status.Errorf(codes.InvalidArgument, "region: unknown region %q (regions: %s)", name, r.regionNames())
	}
	if reg.Health == "failed" {
		return Region{}, false, status.Errorf(codes.Unavailable, "region %s is failed", name)
	}
	return reg, false, nil
}

func (r *Router) remember(job, region string) {
	r.mu.Lock()
	r.owners[job] = region
	r.mu.Unlock()
}

func (r *Router) forget(job string) {
	r.mu.Lock()
	delete(r.owners, job)
	r.mu.Unlock()
}

// owner finds the region whose shard owns a job: the cache, the local
// shard, then every other region.
func (r *Router) owner(ctx context.Context, job string) (string, error) {
	if strings.TrimSpace(job) == "" {
		return "", status.Error(codes.InvalidArgument, "job id: required")
	}
	r.mu.Lock()
	region, ok := r.owners[job]
	r.mu.Unlock()
	if ok {
		return region, nil
	}
	if _, err := r.shard().GetJob(ctx, &pb.GetJobRequest{Id: job}); err == nil {
		r.remember(job, r.dir.Local())
		return r.dir.Local(), nil
	} else if status.Code(err) != codes.NotFound {
		return "", err
	}
	type answer struct {
		region string
		err    error
	}
	peers := r.peers()
	answers := make(chan answer, len(peers))
	for _, reg := range peers {
		go func() {
			c, err := r.conn(reg)
			if err == nil {
				cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
				_, err = pb.NewJobServiceClient(c).GetJob(outgoing(cctx), &pb.GetJobRequest{Id: job})
				cancel()
			}
			answers <- answer{reg.Name, err}
		}()
	}
	found := ""
	var errs []error
	for range peers {
		a := <-answers
		switch {
		case a.err == nil && (found == "" || a.region < found):
			found = a.region
		case a.err != nil && status.Code(a.err) != codes.NotFound:
			errs = append(errs, fmt.Errorf("region %s: %s", a.region, status.Convert(a.err).Message()))
		}
	}
	if found != "" {
		r.remember(job, found)
		return found, nil
	}
	if len(errs) > 0 {
		return "", status.Errorf(codes.Unavailable, "job %s not found in reachable regions; %v", job, errors.Join(errs...))
	}
	return "", status.Errorf(codes.NotFound, "job %s not found in any region", job)
}

// jobCall runs a job-scoped call on the job's region.
func jobCall[Req, Resp any](r *Router, ctx context.Context, job string, req Req,
	local func(context.Context, Req) (Resp, error),
	remote func(*grpc.ClientConn) func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	var zero Resp
	if routed(ctx) {
		return local(ctx, req)
	}
	region, err := r.owner(ctx, job)
	if err != nil {
		return zero, err
	}
	resp, isLocal, err := regionCall(r, ctx, region, req, local, remote)
	if !isLocal && status.Code(err) == codes.NotFound {
		r.forget(job)
	}
	return resp, err
}

// regionCall runs a call on a region's shard: the local one, or a peer's
// over gRPC. It says whether the call stayed local.
func regionCall[Req, Resp any](r *Router, ctx context.Context, region string, req Req,
	local func(context.Context, Req) (Resp, error),
	remote func(*grpc.ClientConn) func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, bool, error) {
	var zero Resp
	reg, isLocal, err := r.target(region)
	if err != nil {
		return zero, isLocal, err
	}
	servedBy(ctx, region)
	if isLocal {
		resp, err := local(ctx, req)
		return resp, true, err
	}
	c, err := r.conn(reg)
	if err != nil {
		return zero, false, err
	}
	resp, err := remote(c)(outgoing(ctx), req)
	return resp, false, err
}
