package federation

import (
	"context"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// notForwarded are the methods that do not go to one region chosen by
// their request. Every other method of the API must route by a job, update
// or host id in its request; TestEveryMethodIsForwarded fails on a method
// that does neither, so a new RPC cannot be left out.
var notForwarded = map[string]string{
	pb.JobService_ListJobs_FullMethodName:        "fan-out",
	pb.HostService_ListHosts_FullMethodName:      "fan-out",
	pb.HostService_ListHostPools_FullMethodName:  "fan-out",
	pb.RegionService_ListRegions_FullMethodName:  "fan-out",
	pb.PoolService_CreatePool_FullMethodName:     "everywhere",
	pb.PoolService_UpdatePool_FullMethodName:     "everywhere",
	pb.PoolService_DeletePool_FullMethodName:     "everywhere",
	pb.PoolService_ListPools_FullMethodName:      "local",
	pb.PoolService_GetPool_FullMethodName:        "local",
	pb.PoolService_GetPoolHistory_FullMethodName: "local",
	// What this member saw of the regions' health: no shard serves it.
	pb.RegionService_GetRegionHistory_FullMethodName: "router",
	pb.SystemService_GetVersion_FullMethodName:       "local",
	// CreateJob goes to the region its spec names or the chooser picks;
	// CreateJobs sends each region its specs.
	pb.JobService_CreateJob_FullMethodName:  "placed",
	pb.JobService_CreateJobs_FullMethodName: "placed",
	// Migrations and clusters belong to a region: the one their request's
	// region field names, else the local one.
	pb.JobService_GetMigration_FullMethodName:      "local",
	pb.JobService_ListMigrations_FullMethodName:    "local",
	pb.JobService_PauseMigration_FullMethodName:    "local",
	pb.JobService_ResumeMigration_FullMethodName:   "local",
	pb.JobService_AbortMigration_FullMethodName:    "local",
	pb.JobService_RollbackMigration_FullMethodName: "local",
	pb.HostService_ListClusters_FullMethodName:     "local",
	pb.HostService_GetCluster_FullMethodName:       "local",
	pb.HostService_DrainCluster_FullMethodName:     "local",
	pb.HostService_UndrainCluster_FullMethodName:   "local",
	// A backup is of the store of the region its request names, else of
	// the local one.
	pb.SystemService_BackupStore_FullMethodName: "local",
}

// testCallKey names the API method a test call exercises; the router
// passes it on with every call it makes for it.
const testCallKey = "x-test-call"

// recorder is a shard that records the methods it serves, for any method
// of the API: it knows the job j-<region> and the host h-<region>, and
// answers everything else with an empty message.
type recorder struct {
	region string
	mu     sync.Mutex
	calls  map[string]int // "<test call> <method>" → count
}

func (rec *recorder) served(testCall, method string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.calls[testCall+" "+method]
}

func (rec *recorder) handle(_ any, ss grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(ss)
	name := protoreflect.FullName(strings.ReplaceAll(strings.TrimPrefix(full, "/"), "/", "."))
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return status.Errorf(codes.Unimplemented, "%s: %v", full, err)
	}
	md := d.(protoreflect.MethodDescriptor)
	in, _ := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	out, _ := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	req := in.New().Interface()
	if err := ss.RecvMsg(req); err != nil {
		return err
	}
	resp := out.New().Interface()
	switch r := req.(type) {
	case *pb.GetJobRequest:
		if r.Id != "j-"+rec.region {
			return status.Errorf(codes.NotFound, "job %s not found", r.Id)
		}
	case *pb.ListHostsRequest:
		if r.HostId == "" || r.HostId == "h-"+rec.region {
			resp = &pb.ListHostsResponse{Hosts: []*pb.Host{{Id: "h-" + rec.region, Region: rec.region}}}
		}
	}
	inmd, _ := metadata.FromIncomingContext(ss.Context())
	rec.mu.Lock()
	for _, tc := range inmd.Get(testCallKey) {
		rec.calls[tc+" "+full]++
	}
	rec.mu.Unlock()
	if md.IsStreamingServer() {
		return nil
	}
	return ss.SendMsg(resp)
}

func serve(t *testing.T, register func(grpc.ServiceRegistrar), opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(opts...)
	register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// fill sets a request's routing fields to name the given region's job,
// update or host. It reports whether the request has such a field.
func fill(req protoreflect.Message, region string) bool {
	fields := req.Descriptor().Fields()
	keyed := false
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.StringKind || fd.IsList() {
			continue
		}
		switch fd.Name() {
		case "job_id":
			req.Set(fd, protoreflect.ValueOfString("j-"+region))
		case "update_id":
			req.Set(fd, protoreflect.ValueOfString("j-"+region+".2"))
		case "host_id":
			req.Set(fd, protoreflect.ValueOfString("h-"+region))
		case "id":
			if !strings.HasSuffix(string(req.Descriptor().Name()), "JobRequest") {
				continue
			}
			req.Set(fd, protoreflect.ValueOfString("j-"+region))
		default:
			continue
		}
		keyed = true
	}
	return keyed
}

// TestEveryMethodIsForwarded calls every method of every service of the
// API through a region's router and through a standby of it, and checks
// which region's shard served it: the region its request names, or the
// ones notForwarded lists.
func TestEveryMethodIsForwarded(t *testing.T) {
	recs := map[string]*recorder{}
	shardAddrs := map[string]string{}
	for _, region := range []string{"east", "west"} {
		rec := &recorder{region: region, calls: map[string]int{}}
		recs[region] = rec
		shardAddrs[region] = serve(t, func(grpc.ServiceRegistrar) {}, grpc.UnknownServiceHandler(rec.handle))
	}
	// Each region's router reaches its shard over gRPC, as a standby does.
	var lis = map[string]net.Listener{}
	var regions []Region
	for _, region := range []string{"east", "west"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[region] = l
		regions = append(regions, Region{Name: region, Addr: l.Addr().String()})
	}
	for _, region := range []string{"east", "west"} {
		r := NewRouter(nil, NewStaticDirectory(region, regions), nil)
		r.SetLeader(func() string { return shardAddrs[region] })
		g := grpc.NewServer()
		r.Register(g)
		go func() { _ = g.Serve(lis[region]) }()
		t.Cleanup(func() { g.Stop(); r.Close() })
	}
	standby := NewRouter(nil, NewStaticDirectory("east", regions), nil)
	standby.SetLeader(func() string { return regions[0].Addr })
	t.Cleanup(standby.Close)
	standbyAddr := serve(t, standby.Register)

	entries := map[string]*grpc.ClientConn{"east": dial(t, regions[0].Addr), "an east standby": dial(t, standbyAddr)}
	svcs := pb.File_peloton_v1_service_proto.Services()
	checked, byRegion := 0, 0
	for i := 0; i < svcs.Len(); i++ {
		sd := svcs.Get(i)
		if ownServices[sd.FullName()] {
			continue // the federation's own service: served by the router
		}
		for j := 0; j < sd.Methods().Len(); j++ {
			md := sd.Methods().Get(j)
			full := "/" + string(sd.FullName()) + "/" + string(md.Name())
			in, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
			if err != nil {
				t.Fatal(err)
			}
			req := in.New()
			want := []string{"west"}
			switch kind := notForwarded[full]; kind {
			case "":
				if !fill(req, "west") {
					t.Errorf("%s: its request has no job_id, update_id, host_id or job id field to route by, "+
						"and notForwarded does not list it: say how it routes", full)
					continue
				}
			case "fan-out", "everywhere":
				want = []string{"east", "west"}
			case "local":
				want = []string{"east"}
			case "router":
				want = nil
			case "placed":
				switch r := req.Interface().(type) {
				case *pb.CreateJobRequest:
					r.Spec = &pb.JobSpec{Region: "west"}
				case *pb.CreateJobsRequest:
					r.Jobs = []*pb.JobSpec{{Region: "west"}, {Region: "west"}}
				}
			default:
				t.Fatalf("%s: unknown kind %q", full, kind)
			}
			cases := []routeCase{{req: req, want: want}}
			if region := req.Descriptor().Fields().ByName("region"); notForwarded[full] == "local" && region != nil && region.Kind() == protoreflect.StringKind {
				// A local call that names a region goes there.
				named := proto.Clone(req.Interface()).ProtoReflect()
				named.Set(region, protoreflect.ValueOfString("west"))
				cases = append(cases, routeCase{req: named, want: []string{"west"}, what: " naming west"})
				byRegion++
			}
			for _, c := range cases {
				for entry, cc := range entries {
					tc := full + c.what + " via " + entry
					ctx := metadata.AppendToOutgoingContext(context.Background(), testCallKey, tc)
					if err := callAny(ctx, cc, md, full, c.req.Interface()); err != nil && !(c.want == nil && status.Code(err) == codes.FailedPrecondition) {
						t.Errorf("%s through %s: %v", full+c.what, entry, err)
						continue
					}
					var got []string
					for _, region := range []string{"east", "west"} {
						if recs[region].served(tc, full) > 0 {
							got = append(got, region)
						}
					}
					if strings.Join(got, ",") != strings.Join(c.want, ",") {
						t.Errorf("%s through %s: served by %v, want %v", full+c.what, entry, got, c.want)
					}
				}
			}
			checked++
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d methods: the API has more", checked)
	}
	t.Logf("%d methods forwarded as their requests say, from a region and from a standby (%d local ones also to the region they name)", checked, byRegion)
}

// routeCase is a request and the regions that must serve it.
type routeCase struct {
	req  protoreflect.Message
	want []string
	what string
}

// callAny calls a unary or server-streaming method by name.
func callAny(ctx context.Context, cc *grpc.ClientConn, md protoreflect.MethodDescriptor, full string, req proto.Message) error {
	out, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return err
	}
	if !md.IsStreamingServer() {
		return cc.Invoke(ctx, full, req, out.New().Interface())
	}
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, full)
	if err != nil {
		return err
	}
	if err := cs.SendMsg(req); err != nil {
		return err
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	for {
		if err := cs.RecvMsg(out.New().Interface()); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// unimplementedShard implements every shard method as "not implemented".
type unimplementedShard struct {
	pb.UnimplementedJobServiceServer
	pb.UnimplementedTaskServiceServer
	pb.UnimplementedPoolServiceServer
	pb.UnimplementedHostServiceServer
	pb.UnimplementedRegionServiceServer
	pb.UnimplementedEventServiceServer
	pb.UnimplementedSystemServiceServer
}

// The shard of this process is reached for every forwarded method: its
// own method answers (here, that it is not implemented), not the router.
func TestInProcessShardServesEveryMethod(t *testing.T) {
	cc := inProcess{shard: unimplementedShard{}}
	var names []string
	for full := range methods {
		names = append(names, full)
	}
	sort.Strings(names)
	for _, full := range names {
		m := methods[full]
		var err error
		if m.stream {
			var cs grpc.ClientStream
			if cs, err = cc.NewStream(context.Background(), nil, full); err == nil {
				if err = cs.SendMsg(m.newInput()); err == nil {
					err = cs.RecvMsg(m.newOutput())
				}
			}
		} else {
			err = cc.Invoke(context.Background(), full, m.newInput(), m.newOutput())
		}
		want := "method " + string(m.desc.Name()) + " not implemented"
		if status.Code(err) != codes.Unimplemented || status.Convert(err).Message() != want {
			t.Errorf("%s: %v, want the shard's own %q", full, err, want)
		}
	}
}

func TestDestinationFromRequest(t *testing.T) {
	routeFor := func(full string) route { return methods[full].route }
	for _, c := range []struct {
		name string
		rt   route
		req  proto.Message
		want dest
		err  string
	}{
		{"job id", routeFor(pb.JobService_GetJob_FullMethodName), &pb.GetJobRequest{Id: "j1"}, dest{job: "j1"}, ""},
		{"empty job id", routeFor(pb.JobService_StopJob_FullMethodName), &pb.StopJobRequest{}, dest{}, "id: required"},
		{"task of a job", routeFor(pb.TaskService_GetTask_FullMethodName), &pb.GetTaskRequest{JobId: "j1"}, dest{job: "j1"}, ""},
		{"empty job_id", routeFor(pb.TaskService_ListTasks_FullMethodName), &pb.ListTasksRequest{}, dest{}, "job_id: required"},
		{"update id", routeFor(pb.JobService_PauseUpdate_FullMethodName), &pb.PauseUpdateRequest{UpdateId: "j1.3"}, dest{job: "j1"}, ""},
		{"malformed update id", routeFor(pb.JobService_GetUpdate_FullMethodName), &pb.GetUpdateRequest{UpdateId: "j1"}, dest{}, "update_id"},
		{"host", routeFor(pb.HostService_DrainHost_FullMethodName), &pb.DrainHostRequest{HostId: "h1"}, dest{host: "h1"}, ""},
		{"host in a region", routeFor(pb.HostService_MarkHostDown_FullMethodName), &pb.MarkHostDownRequest{HostId: "h1", Region: "west"}, dest{region: "west"}, ""},
		{"nothing to route by", routeFor(pb.PoolService_ListPools_FullMethodName), &pb.ListPoolsRequest{}, dest{}, ""},
	} {
		got, err := c.rt.destOf(c.req.ProtoReflect())
		if c.err != "" {
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want InvalidArgument naming %s", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
}
