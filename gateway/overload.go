package gateway

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
)

// limiter bounds the unary calls served at once. A call that finds every
// slot taken waits up to wait for one, then is refused with
// ResourceExhausted and a RetryInfo of retryAfter, before anything of it
// ran: refusing is always safe to retry. Streams (Watch) are not counted:
// they live long and cost little while idle.
//
// It also holds every call but those carrying a job spec to the smaller
// request size, as the HTTP side does.
type limiter struct {
	slots      chan struct{}
	wait       time.Duration
	retryAfter time.Duration
	maxBytes   int64
	// jobsPerRequest bounds the specs of one CreateJobs call (0: the
	// regions check it).
	jobsPerRequest int
	// specMethods take up to the gRPC server's own (larger) limit.
	specMethods map[string]bool
	shed        prometheus.Counter
	inFlight    prometheus.Gauge
}

func newLimiter(l Limits, reg prometheus.Registerer) *limiter {
	lim := &limiter{
		slots:          make(chan struct{}, l.InFlight),
		wait:           l.InFlightWait,
		retryAfter:     retryAfter(l.InFlightWait),
		maxBytes:       l.RequestBytes,
		jobsPerRequest: l.JobsPerRequest,
		specMethods:    specMethods(),
		shed: prometheus.NewCounter(prometheus.CounterOpts{Name: "peloton_gateway_calls_shed_total",
			Help: "Unary calls refused with ResourceExhausted because every in-flight slot was busy."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "peloton_gateway_calls_in_flight",
			Help: "Unary calls being served."}),
	}
	reg.MustRegister(lim.shed, lim.inFlight)
	return lim
}

// retryAfter is the hint given with a refusal: long enough for the calls
// in flight to move on, at least a second (what Retry-After can say).
func retryAfter(wait time.Duration) time.Duration {
	return max(time.Second, 10*wait)
}

func (l *limiter) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if m, ok := req.(proto.Message); ok && !l.specMethods[info.FullMethod] {
		if n := proto.Size(m); int64(n) > l.maxBytes {
			return nil, status.Errorf(codes.ResourceExhausted, "the request is %d bytes, more than the limit of %d for %s (only creating or updating a job takes more)",
				n, l.maxBytes, info.FullMethod)
		}
	}
	if r, ok := req.(*pb.CreateJobsRequest); ok && l.jobsPerRequest > 0 && len(r.GetJobs()) > l.jobsPerRequest {
		return nil, status.Errorf(codes.InvalidArgument, "jobs: has %d specs, more than the limit of %d per request: send them in several requests",
			len(r.GetJobs()), l.jobsPerRequest)
	}
	if !l.acquire(ctx) {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		l.shed.Inc()
		return nil, l.refusal()
	}
	l.inFlight.Inc()
	defer func() {
		l.inFlight.Dec()
		<-l.slots
	}()
	return handler(ctx, req)
}

// acquire takes a slot, waiting up to l.wait for one.
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if l.wait <= 0 {
		return false
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) refusal() error {
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("the server is busy (%d calls in flight): retry after %s", cap(l.slots), l.retryAfter))
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(l.retryAfter)}); err == nil {
		st = d
	}
	return st.Err()
}

// specMethods are the RPCs whose request carries a job spec.
func specMethods() map[string]bool {
	out := map[string]bool{}
	services := pb.File_peloton_v1_service_proto.Services()
	for i := 0; i < services.Len(); i++ {
		sd := services.Get(i)
		for j := 0; j < sd.Methods().Len(); j++ {
			md := sd.Methods().Get(j)
			fields := md.Input().Fields()
			for k := 0; k < fields.Len(); k++ {
				if f := fields.Get(k); f.Kind() == protoreflect.MessageKind && f.Message().FullName() == "peloton.v1.JobSpec" {
					out[fmt.Sprintf("/%s/%s", sd.FullName(), md.Name())] = true
				}
			}
		}
	}
	return out
}

// RetryDelay is the RetryInfo hint of an error, if it has one.
func RetryDelay(err error) (time.Duration, bool) {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}

// httpErrors writes the API's errors as grpc-gateway does, with a
// Retry-After header when the error says when to retry (ResourceExhausted
// gives HTTP 429).
func httpErrors(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if d, ok := RetryDelay(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}
