package federation

import (
	"context"
	"errors"
	"io"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Every RPC of the API's shard services is forwarded by one mechanism,
// driven by the protobuf descriptors: the request's fields say where it
// goes, and the call is made by method name on the chosen region's
// connection. A new RPC is forwarded as soon as it is generated:
//
//   - a request with a `job_id` field, or an `id` field in a
//     `<Verb>JobRequest`, goes to the region that owns the job;
//   - a request with an `update_id` field ("<job id>.<version>") goes to the
//     region that owns the update's job;
//   - a request with a `host_id` field goes to the region whose shard has
//     the host;
//   - a non-empty `region` field names the region outright; a request
//     with a `region` field and neither set goes to the local region;
//   - anything else is served by the local region's shard.
//
// A call that a peer already routed (it carries RoutedKey) is served by the
// local shard as it is. The few calls that do more than forward (job
// creation, listings that span regions, pool writes, the global pass, the
// merged event stream, a job's moves between regions) are explicit
// overrides, listed in init below.

// ownServices are not a shard's: the router serves the federation's own,
// the gateway the caller's identity and its audit log.
var ownServices = map[protoreflect.FullName]bool{
	"peloton.v1.FederationService": true,
	"peloton.v1.AuthService":       true,
	"peloton.v1.AuditService":      true,
}

// shardServices are the generated descriptions of the services a Shard
// implements: the router serves them in process through these handlers.
var shardServices = []*grpc.ServiceDesc{
	&pb.JobService_ServiceDesc, &pb.TaskService_ServiceDesc, &pb.PoolService_ServiceDesc,
	&pb.HostService_ServiceDesc, &pb.RegionService_ServiceDesc, &pb.EventService_ServiceDesc,
	&pb.SystemService_ServiceDesc,
}

// keyKind says what in a request names the region that serves it.
type keyKind int

const (
	byDefault keyKind = iota // nothing: the local region
	byJob                    // a job id: the job's region
	byUpdate                 // an update id: its job's region
	byHost                   // a host id: the region whose shard has the host
)

func (k keyKind) String() string {
	return [...]string{"local", "job", "update", "host"}[k]
}

// route is how a method's requests are routed, read once from its
// descriptor.
type route struct {
	kind   keyKind
	key    protoreflect.FieldDescriptor // the field holding the id
	region protoreflect.FieldDescriptor // a field naming the region, or nil
}

// method is one forwarded RPC.
type method struct {
	full    string // "/peloton.v1.JobService/GetJob"
	desc    protoreflect.MethodDescriptor
	in, out protoreflect.MessageType
	stream  bool
	route   route
}

func (m *method) newInput() proto.Message  { return m.in.New().Interface() }
func (m *method) newOutput() proto.Message { return m.out.New().Interface() }

type (
	unaryOverride  func(r *Router, ctx context.Context, req proto.Message) (proto.Message, error)
	streamOverride func(r *Router, ctx context.Context, m *method, req proto.Message, ss grpc.ServerStream) error
)

var (
	// methods are the forwarded RPCs by full method name.
	methods = map[string]*method{}
	// services are the forwarded services, in the file's order.
	services []protoreflect.ServiceDescriptor
	// shardUnary and shardStreams are the generated handlers of the
	// Shard's methods, by full method name.
	shardUnary   = map[string]grpc.MethodHandler{}
	shardStreams = map[string]grpc.StreamHandler{}

	unaryOverrides  map[string]unaryOverride
	streamOverrides map[string]streamOverride
	// descriptorErr is why the table could not be built; Register reports it.
	descriptorErr error
)

func init() {
	for _, sd := range shardServices {
		for _, md := range sd.Methods {
			shardUnary["/"+sd.ServiceName+"/"+md.MethodName] = md.Handler
		}
		for _, st := range sd.Streams {
			shardStreams["/"+sd.ServiceName+"/"+st.StreamName] = st.Handler
		}
	}
	svcs := pb.File_peloton_v1_service_proto.Services()
	for i := 0; i < svcs.Len(); i++ {
		sd := svcs.Get(i)
		if ownServices[sd.FullName()] {
			continue
		}
		services = append(services, sd)
		for j := 0; j < sd.Methods().Len(); j++ {
			md := sd.Methods().Get(j)
			in, err1 := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
			out, err2 := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
			if err := errors.Join(err1, err2); err != nil {
				descriptorErr = errors.Join(descriptorErr, err)
				continue
			}
			full := "/" + string(sd.FullName()) + "/" + string(md.Name())
			methods[full] = &method{full: full, desc: md, in: in, out: out,
				stream: md.IsStreamingServer() || md.IsStreamingClient(), route: routeOf(md)}
		}
	}
	unaryOverrides = map[string]unaryOverride{
		pb.JobService_CreateJob_FullMethodName:           typed((*Router).CreateJob),
		pb.JobService_CreateJobs_FullMethodName:          typed((*Router).CreateJobs),
		pb.JobService_GetJob_FullMethodName:              typed((*Router).getJob),
		pb.JobService_ListJobs_FullMethodName:            typed((*Router).listJobs),
		pb.JobService_DeleteJob_FullMethodName:           typed((*Router).deleteJob),
		pb.HostService_ListHosts_FullMethodName:          typed((*Router).listHosts),
		pb.HostService_ListHostPools_FullMethodName:      typed((*Router).listHostPools),
		pb.RegionService_ListRegions_FullMethodName:      typed((*Router).listRegions),
		pb.RegionService_GetRegionHistory_FullMethodName: typed((*Router).getRegionHistory),
		pb.PoolService_CreatePool_FullMethodName:         typed((*Router).createPool),
		pb.PoolService_UpdatePool_FullMethodName:         typed((*Router).updatePool),
		pb.PoolService_DeletePool_FullMethodName:         typed((*Router).deletePool),
		pb.PoolService_GetPool_FullMethodName:            typed((*Router).getPool),
	}
	streamOverrides = map[string]streamOverride{
		pb.EventService_Watch_FullMethodName: (*Router).watch,
	}
}

// typed adapts a typed override to the table.
func typed[Req, Resp proto.Message](f func(*Router, context.Context, Req) (Resp, error)) unaryOverride {
	return func(r *Router, ctx context.Context, req proto.Message) (proto.Message, error) {
		resp, err := f(r, ctx, req.(Req))
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// routeOf reads how a method routes from the fields of its request.
func routeOf(md protoreflect.MethodDescriptor) route {
	fields := md.Input().Fields()
	str := func(name protoreflect.Name) protoreflect.FieldDescriptor {
		fd := fields.ByName(name)
		if fd == nil || fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated {
			return nil
		}
		return fd
	}
	rt := route{region: str("region")}
	switch {
	case str("job_id") != nil:
		rt.kind, rt.key = byJob, str("job_id")
	case str("update_id") != nil:
		rt.kind, rt.key = byUpdate, str("update_id")
	case str("id") != nil && strings.HasSuffix(string(md.Input().Name()), "JobRequest"):
		rt.kind, rt.key = byJob, str("id")
	case str("host_id") != nil:
		rt.kind, rt.key = byHost, str("host_id")
	}
	return rt
}

// dest is where a request goes, as the request says: a named region, the
// region of a job or of a host, or (all empty) the local region.
type dest struct {
	region, job, host string
}

// destOf reads a request's destination. It is pure: looking the job or
// host up is the caller's business.
func (rt route) destOf(req protoreflect.Message) (dest, error) {
	if rt.region != nil {
		if name := req.Get(rt.region).String(); name != "" {
			return dest{region: name}, nil
		}
	}
	if rt.kind == byDefault {
		return dest{}, nil
	}
	id := req.Get(rt.key).String()
	if strings.TrimSpace(id) == "" && rt.region != nil {
		// Neither names a region (a pool's migration, which has no
		// job): the local region's shard serves it, and checks it.
		return dest{}, nil
	}
	if strings.TrimSpace(id) == "" {
		return dest{}, status.Errorf(codes.InvalidArgument, "%s: required", rt.key.Name())
	}
	switch rt.kind {
	case byUpdate:
		job, err := updateJob(id)
		if err != nil {
			return dest{}, err
		}
		return dest{job: job}, nil
	case byHost:
		return dest{host: id}, nil
	}
	return dest{job: id}, nil
}

// Register adds every service to a gRPC server: the shard services through
// the forwarder, the federation's own service as the router implements it.
func (r *Router) Register(g grpc.ServiceRegistrar) {
	if descriptorErr != nil {
		// The API's generated code and descriptors disagree: a build
		// problem, reported on every call rather than by a panic.
		r.log("API descriptors incomplete; some methods are not forwarded", "err", descriptorErr)
	}
	for _, sd := range services {
		desc := &grpc.ServiceDesc{ServiceName: string(sd.FullName()), HandlerType: (*any)(nil), Metadata: sd.ParentFile().Path()}
		for j := 0; j < sd.Methods().Len(); j++ {
			m, ok := methods["/"+string(sd.FullName())+"/"+string(sd.Methods().Get(j).Name())]
			if !ok {
				continue
			}
			if m.stream {
				desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: string(m.desc.Name()), Handler: r.streamHandler(m),
					ServerStreams: m.desc.IsStreamingServer(), ClientStreams: m.desc.IsStreamingClient()})
			} else {
				desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: string(m.desc.Name()), Handler: r.unaryHandler(m)})
			}
		}
		g.RegisterService(desc, nil)
	}
	pb.RegisterFederationServiceServer(g, r)
}

func (r *Router) unaryHandler(m *method) grpc.MethodHandler {
	return func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := m.newInput()
		if err := dec(in); err != nil {
			return nil, err
		}
		h := func(ctx context.Context, req any) (any, error) {
			resp, err := r.call(ctx, m, req.(proto.Message))
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
		if ic == nil {
			return h(ctx, in)
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: r, FullMethod: m.full}, h)
	}
}

func (r *Router) streamHandler(m *method) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error {
		if m.desc.IsStreamingClient() {
			return status.Errorf(codes.Unimplemented, "%s: client streams are not forwarded", m.full)
		}
		in := m.newInput()
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		return r.serveStream(ss.Context(), m, in, ss)
	}
}

// call serves one unary call: locally when a peer routed it, by its
// override if it has one, else forwarded where its request says.
func (r *Router) call(ctx context.Context, m *method, req proto.Message) (proto.Message, error) {
	if routed(ctx) {
		return invoke(ctx, r.local(), m, req)
	}
	if o := unaryOverrides[m.full]; o != nil {
		return o(r, ctx, req)
	}
	return r.forward(ctx, m, req)
}

// forward sends a call to the region its request names.
func (r *Router) forward(ctx context.Context, m *method, req proto.Message) (proto.Message, error) {
	d, err := m.route.destOf(req.ProtoReflect())
	if err != nil {
		return nil, err
	}
	cc, isLocal, err := r.connFor(ctx, d)
	if err != nil {
		return nil, err
	}
	resp, err := invoke(ctx, cc, m, req)
	if err != nil && d.job != "" && !isLocal && status.Code(err) == codes.NotFound {
		r.forget(d.job) // it moved, or is gone: look it up again next time
	}
	return resp, err
}

func invoke(ctx context.Context, cc grpc.ClientConnInterface, m *method, req proto.Message) (proto.Message, error) {
	resp := m.newOutput()
	if err := cc.Invoke(ctx, m.full, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// connFor resolves a destination to the connection of its region's shard
// and records which region serves the call.
func (r *Router) connFor(ctx context.Context, d dest) (grpc.ClientConnInterface, bool, error) {
	region := d.region
	var err error
	switch {
	case region != "":
	case d.job != "":
		region, err = r.owner(ctx, d.job)
	case d.host != "":
		region, err = r.hostRegion(ctx, d.host)
	default:
		region = r.dir.Local()
	}
	if err != nil {
		return nil, false, err
	}
	return r.regionConn(ctx, region)
}

// regionConn is the connection to a region's shard: the local one, or a
// reachable peer's router.
func (r *Router) regionConn(ctx context.Context, region string) (grpc.ClientConnInterface, bool, error) {
	reg, isLocal, err := r.target(region)
	if err != nil {
		return nil, isLocal, err
	}
	servedBy(ctx, region)
	if isLocal {
		return r.local(), true, nil
	}
	c, err := r.conn(reg)
	if err != nil {
		return nil, false, err
	}
	return c, false, nil
}

// serveStream serves one server-streaming call like call serves a unary
// one.
func (r *Router) serveStream(ctx context.Context, m *method, req proto.Message, ss grpc.ServerStream) error {
	if routed(ctx) {
		return relay(ctx, r.local(), m, req, ss.SendMsg)
	}
	if o := streamOverrides[m.full]; o != nil {
		return o(r, ctx, m, req, ss)
	}
	return r.forwardStream(ctx, m, req, ss)
}

func (r *Router) forwardStream(ctx context.Context, m *method, req proto.Message, ss grpc.ServerStream) error {
	d, err := m.route.destOf(req.ProtoReflect())
	if err != nil {
		return err
	}
	cc, _, err := r.connFor(ctx, d)
	if err != nil {
		return err
	}
	return relay(ctx, cc, m, req, ss.SendMsg)
}

// relay runs a server-streaming call on cc and passes each message on.
func relay(ctx context.Context, cc grpc.ClientConnInterface, m *method, req proto.Message, send func(any) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{StreamName: string(m.desc.Name()), ServerStreams: true}, m.full)
	if err != nil {
		return err
	}
	// A stream the server already ended says why on RecvMsg.
	if err := cs.SendMsg(req); err != nil && err != io.EOF {
		return err
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	for {
		msg := m.newOutput()
		err := cs.RecvMsg(msg)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := send(msg); err != nil {
			return err
		}
	}
}
