package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
}

// Default limits of a gateway.
const (
	DefaultRequestBytes     = 1 << 20
	DefaultSpecRequestBytes = 64 << 20
	DefaultInFlight         = 256
	DefaultInFlightWait     = 50 * time.Millisecond
)

// WithDefaults fills the zero values with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.RequestBytes == 0 {
		l.RequestBytes = DefaultRequestBytes
	}
	if l.SpecRequestBytes == 0 {
		l.SpecRequestBytes = DefaultSpecRequestBytes
	}
	if l.InFlight == 0 {
		l.InFlight = DefaultInFlight
	}
	if l.InFlightWait == 0 {
		l.InFlightWait = DefaultInFlightWait
	}
	return l
}

// hygiene checks an HTTP/JSON request before the API sees it: the body's
// size, read into memory only up to the route's limit.
type hygiene struct {
	routes *routeTable
	limits Limits
}

func (h *hygiene) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ops := h.routes.match(r.URL.Path)
		op := ops[r.Method]
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
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
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
