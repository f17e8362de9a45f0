package federation

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/gossip"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
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
	// Members are the region's gossip members as this member sees them
	// (none without gossip).
	Members []RegionMember
	// LastSeen is the latest observation of the membership that found a
	// member of the region reachable (zero: never, or no gossip).
	LastSeen time.Time
}

// RegionMember is one gossip member of a region as this member sees it.
type RegionMember struct {
	Name string
	// Addr is its gossip address.
	Addr   string
	Role   string
	Leader bool
	// Status is "alive", "suspect" (alive, but a probe of it failed
	// lately), "leaving", "left" or "failed".
	Status string
	// Probes are this member's probes of it over the last
	// gossip.ProbeWindow (five minutes), RecentProbes over the last
	// gossip.RecentProbeWindow (a minute, what the region list shows).
	// Probed is false for this member itself, which it does not probe.
	Probes, RecentProbes gossip.Probes
	Probed               bool
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
	pb.UnimplementedFederationServiceServer

	localMu   sync.RWMutex
	localConn grpc.ClientConnInterface
	replicas  *replicaBook
	drills    *drills
	isolation Isolation
	states    *regionStates
	log       func(msg string, args ...any)
	warn      func(msg string, args ...any)
	bg        *background
	dir       Directory
	choose    Chooser
	// history is the regions' health over time (nil: none kept).
	history atomic.Pointer[RegionHistory]

	// dialCreds, when set, secures calls to other regions (and to the
	// region's leader): the transport credentials for the region dialed.
	dialCreds func(region string) credentials.TransportCredentials

	// relocating: the failed regions whose jobs the failover shell is
	// relocating now (ListReplicas says so to the owner coming back).
	relocating relocations

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

// NewRouter returns a router in front of the local shard; with a nil
// shard, calls for the local region are refused until SetLocal or
// SetLeader. A nil chooser places jobs that name no region in the local
// region.
func NewRouter(local Shard, dir Directory, choose Chooser) *Router {
	r := &Router{dir: dir, choose: choose, conns: map[string]*grpc.ClientConn{}, owners: map[string]string{},
		log: func(string, ...any) {}, warn: func(string, ...any) {}, bg: newBackground(), states: &regionStates{period: 3 * time.Second, maxAge: time.Minute}}
	if local != nil {
		r.SetLocal(local)
	} else {
		r.SetLeader(func() string { return "" })
	}
	return r
}

// SetLocal makes the router serve the region's calls with the shard of
// this process: the member that holds the region's lease.
func (r *Router) SetLocal(s Shard) { r.setLocal(inProcess{shard: s}) }

// SetLeader makes the router serve the region's calls with the shard of
// the member leader names: a standby forwards to the lease holder.
func (r *Router) SetLeader(leader func() string) { r.setLocal(leaderConn{r: r, leader: leader}) }

func (r *Router) setLocal(c grpc.ClientConnInterface) {
	r.localMu.Lock()
	r.localConn = c
	r.localMu.Unlock()
}

// SetDialCredentials secures the calls the router makes to other regions
// and to its region's leader: creds gives the transport credentials for a
// region by name (mutual TLS checked against the region's name).
func (r *Router) SetDialCredentials(creds func(region string) credentials.TransportCredentials) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dialCreds = creds
}

// local is the region's shard as it is now.
func (r *Router) local() grpc.ClientConnInterface {
	r.localMu.RLock()
	defer r.localMu.RUnlock()
	return r.localConn
}

// jobs is the job API as a client would see it: routed to each job's
// region.
func (r *Router) jobs() pb.JobServiceClient { return pb.NewJobServiceClient(selfConn{r}) }

// Jobs is the job API routed as the router routes a client's call (the
// gateway looks a job's pool up with it).
func (r *Router) Jobs() pb.JobServiceClient { return r.jobs() }

// Close stops the router's background work (a running drill heals its
// region and records that it was cut short), waits for it, and drops
// connections to other regions.
func (r *Router) Close() {
	r.bg.close()
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

// conn is the connection to a member at reg.Addr.
func (r *Router) conn(reg Region) (peer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.conns[reg.Addr]; ok {
		return peer{c}, nil
	}
	creds := insecure.NewCredentials()
	if r.dialCreds != nil {
		// A region's leader is dialed as "<region> (leader)".
		name, _, _ := strings.Cut(reg.Name, " ")
		creds = r.dialCreds(name)
	}
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(creds),
		// Forwarded answers (a job config with an override per instance)
		// may be megabytes.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes))}, r.dialOpts...)
	c, err := grpc.NewClient(reg.Addr, opts...)
	if err != nil {
		return peer{}, status.Errorf(codes.Unavailable, "region %s at %s: %v", reg.Name, reg.Addr, err)
	}
	r.conns[reg.Addr] = c
	return peer{c}, nil
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
	if _, err := pb.NewJobServiceClient(r.local()).GetJob(ctx, &pb.GetJobRequest{Id: job}); err == nil {
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
				_, err = pb.NewJobServiceClient(c).GetJob(cctx, &pb.GetJobRequest{Id: job})
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
