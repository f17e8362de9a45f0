package gateway

import (
	"context"
	"net/http"

	"google.golang.org/protobuf/proto"
)

// flushStreamStart sends the HTTP headers of a server stream (GET
// /v1/events) as soon as the stream is open, before its first message,
// so that a client knows at once that it is watching. grpc-gateway calls
// forward-response options with a nil message when a stream starts.
func flushStreamStart(_ context.Context, w http.ResponseWriter, m proto.Message) error {
	if m != nil {
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
	return nil
}
