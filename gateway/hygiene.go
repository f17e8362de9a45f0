package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// Limits bound what the gateway takes in. Zero values take the defaults.
type Limits struct {
	// RequestBytes bounds the body of a request, gRPC message or HTTP
	// body, except for the calls that carry a job spec.
	RequestBytes int64
	// SpecRequestBytes bounds the calls that carry a job spec (create and
	// update a job): a spec with an override per instance runs to tens of
	// MB. It is also the gRPC server's largest message.
	SpecRequestBytes int64
	// InFlight bounds the unary calls served at once; a call that finds
	// them all busy waits up to InFlightWait for one, then is refused with
	// ResourceExhausted (HTTP 429) and a hint of when to retry. Streams are
	// not counted.
	InFlight     int
	InFlightWait time.Duration
	// JobsPerRequest bounds the job specs of one CreateJobs call, checked
	// before the call is authorised spec by spec; 0 leaves it to the
	// regions, which check their own limit.
	JobsPerRequest int
}

// Default limits of a gateway.
const (
	DefaultRequestBytes     = 1 << 20
	DefaultSpecRequestBytes = 64 << 20
	DefaultInFlightWait     = 50 * time.Millisecond
)

// DefaultInFlight is the default bound on calls served at once: 16 per
// CPU the process may use, at least 32. More in flight than the CPUs can
// serve only queues inside the server, raising every call's latency.
func DefaultInFlight() int { return max(32, 16*runtime.GOMAXPROCS(0)) }

// WithDefaults fills the zero values with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.RequestBytes == 0 {
		l.RequestBytes = DefaultRequestBytes
	}
	if l.SpecRequestBytes == 0 {
		l.SpecRequestBytes = DefaultSpecRequestBytes
	}
	if l.InFlight == 0 {
		l.InFlight = DefaultInFlight()
	}
	if l.InFlightWait == 0 {
		l.InFlightWait = DefaultInFlightWait
	}
	return l
}

// hygiene checks an HTTP/JSON request before the API sees it:
//
//   - a method the path does not take: 405 with the Allow header of the
//     path's methods, from the OpenAPI document (OPTIONS answers 204 with
//     it);
//   - a body's size, read into memory only up to the route's limit: 413;
//   - a body that is not JSON at all: 400 naming where it stops being JSON;
//   - a body that is not strict JSON of the route's schema (checkJSON):
//     400 naming the JSON path of every problem, once the call is
//     authorised (bodycheck.go).
//
// The Content-Type was checked in front (front.go).
//
// Paths the API does not have go on to the API's own 404.
type hygiene struct {
	routes *routeTable
	limits Limits
}

func (h *hygiene) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ops := h.routes.match(r.URL.Path)
		op, ok := ops[r.Method]
		if len(ops) > 0 && !ok {
			w.Header().Set("Allow", allow(ops))
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			writeHTTPError(w, http.StatusMethodNotAllowed, codes.Unimplemented,
				fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow(ops)))
			return
		}
		limit := h.limits.RequestBytes
		if op.spec {
			limit = h.limits.SpecRequestBytes
		}
		if r.ContentLength > limit {
			writeHTTPError(w, http.StatusRequestEntityTooLarge, codes.InvalidArgument, tooLarge(r, op, limit, h.limits))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			// A chunked body has no length up front: it is cut at the limit.
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
			if err != nil {
				if errors.As(err, new(*http.MaxBytesError)) {
					writeHTTPError(w, http.StatusRequestEntityTooLarge, codes.InvalidArgument, tooLarge(r, op, limit, h.limits))
					return
				}
				writeHTTPError(w, http.StatusBadRequest, codes.InvalidArgument, "reading the request body: "+err.Error())
				return
			}
			check := &bodyCheck{}
			if op.body != nil && len(bytes.TrimSpace(body)) > 0 {
				problems, readable := checkJSONBody(body, op.body, h.routes, op.ownDecoder, op.pathParams)
				if !readable {
					// Not JSON: it names nothing to authorise.
					writeHTTPError(w, http.StatusBadRequest, codes.InvalidArgument, "request body: "+strings.Join(problems, "\n"))
					return
				}
				// The rest waits until the call is authorised.
				check.problems = problems
			}
			r.Body = &checkedBody{Reader: bytes.NewReader(body), data: body, check: check}
			r.ContentLength = int64(len(body))
			r = r.WithContext(withBodyCheck(r.Context(), check))
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(r *http.Request, op apiOp, limit int64, l Limits) string {
	msg := fmt.Sprintf("the request body is larger than %d bytes, the limit of %s %s", limit, r.Method, r.URL.Path)
	if !op.spec {
		msg += fmt.Sprintf(" (creating or updating a job takes up to %d)", l.SpecRequestBytes)
	}
	return msg
}

// writeHTTPError answers with the API's error body (the JSON form of a
// google.rpc.Status).
func writeHTTPError(w http.ResponseWriter, httpStatus int, code codes.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_ = json.NewEncoder(w).Encode(struct {
		Code    int32  `json:"code"`
		Message string `json:"message"`
		Details []any  `json:"details"`
	}{int32(code), msg, []any{}})
}
