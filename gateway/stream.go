package gateway

import (
	"context"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// flushStreamStart sends the HTTP headers of a watch (GET /v1/events) as
// soon as the stream is open, before its first message, so that a client
// knows at once that it is watching. grpc-gateway calls forward-response
// options with a nil message when a stream starts. Other streams (a
// store backup) send their headers with their first message, or with
// their error's status (403, 412, 429) when they fail first.
func flushStreamStart(ctx context.Context, w http.ResponseWriter, m proto.Message) error {
	if method, _ := runtime.RPCMethod(ctx); m != nil || method != pb.EventService_Watch_FullMethodName {
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
	return nil
}

// headerOnce lets only the first WriteHeader of a response through: a
// stream that ends in an error after flushStreamStart sent its headers
// gets its error in the body, and the status written again is dropped.
func headerOnce(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&onceWriter{ResponseWriter: w}, r)
	})
}

type onceWriter struct {
	http.ResponseWriter
	wrote bool
}

func (o *onceWriter) WriteHeader(code int) {
	if o.wrote {
		return
	}
	o.wrote = true
	o.ResponseWriter.WriteHeader(code)
}

func (o *onceWriter) Write(b []byte) (int, error) {
	o.wrote = true
	return o.ResponseWriter.Write(b)
}

func (o *onceWriter) Flush() {
	o.wrote = true
	_ = http.NewResponseController(o.ResponseWriter).Flush()
}

func (o *onceWriter) Unwrap() http.ResponseWriter { return o.ResponseWriter }
