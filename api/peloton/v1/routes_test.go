package pelotonv1

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
)

// routeRecorder answers every routed call with an empty response and keeps
// the request it received.
type routeRecorder struct {
	UnimplementedJobServiceServer
	UnimplementedHostServiceServer
	got proto.Message
}

func (r *routeRecorder) UpdateJob(_ context.Context, req *UpdateJobRequest) (*UpdateJobResponse, error) {
	r.got = req
	return &UpdateJobResponse{}, nil
}

func (r *routeRecorder) ListUpdates(_ context.Context, req *ListUpdatesRequest) (*ListUpdatesResponse, error) {
	r.got = req
	return &ListUpdatesResponse{}, nil
}

func (r *routeRecorder) GetUpdate(_ context.Context, req *GetUpdateRequest) (*GetUpdateResponse, error) {
	r.got = req
	return &GetUpdateResponse{}, nil
}

func (r *routeRecorder) AbortUpdate(_ context.Context, req *AbortUpdateRequest) (*AbortUpdateResponse, error) {
	r.got = req
	return &AbortUpdateResponse{}, nil
}

func (r *routeRecorder) GetJobConfig(_ context.Context, req *GetJobConfigRequest) (*GetJobConfigResponse, error) {
	r.got = req
	return &GetJobConfigResponse{}, nil
}

func (r *routeRecorder) ListEvents(_ context.Context, req *ListEventsRequest) (*ListEventsResponse, error) {
	r.got = req
	return &ListEventsResponse{}, nil
}

func (r *routeRecorder) DrainHost(_ context.Context, req *DrainHostRequest) (*DrainHostResponse, error) {
	r.got = req
	return &DrainHostResponse{}, nil
}

func (r *routeRecorder) UndrainHost(_ context.Context, req *UndrainHostRequest) (*UndrainHostResponse, error) {
	r.got = req
	return &UndrainHostResponse{}, nil
}

// TestHTTPRoutesOfUpdatesEventsAndDrains drives the generated HTTP/JSON
// handlers: each route must reach its RPC with the path and query fields
// filled, host ids with their "/" included.
func TestHTTPRoutesOfUpdatesEventsAndDrains(t *testing.T) {
	rec := &routeRecorder{}
	mux := runtime.NewServeMux()
	ctx := context.Background()
	if err := RegisterJobServiceHandlerServer(ctx, mux, rec); err != nil {
		t.Fatal(err)
	}
	if err := RegisterHostServiceHandlerServer(ctx, mux, rec); err != nil {
		t.Fatal(err)
	}
	instance := uint32(3)
	cases := []struct {
		method, path, body string
		want               proto.Message
	}{
		{"POST", "/v1/jobs/j1/updates?batchSize=5", `{"name":"x","instances":2}`,
			&UpdateJobRequest{JobId: "j1", BatchSize: proto.Uint32(5), Spec: &JobSpec{Name: "x", Instances: 2}}},
		{"GET", "/v1/jobs/j1/updates", "", &ListUpdatesRequest{JobId: "j1"}},
		{"GET", "/v1/updates/j1.2", "", &GetUpdateRequest{UpdateId: "j1.2"}},
		{"POST", "/v1/updates/j1.2:abort", "{}", &AbortUpdateRequest{UpdateId: "j1.2"}},
		{"GET", "/v1/jobs/j1/config?version=2", "", &GetJobConfigRequest{JobId: "j1", Version: 2}},
		{"GET", "/v1/jobs/j1/events?instance=3&afterSeq=10&limit=5", "",
			&ListEventsRequest{JobId: "j1", Instance: &instance, AfterSeq: 10, Limit: 5}},
		{"GET", "/v1/jobs/j1/events", "", &ListEventsRequest{JobId: "j1"}},
		{"POST", "/v1/hosts/sim/host-0001:drain", `{"reason":"disk"}`, &DrainHostRequest{HostId: "sim/host-0001", Reason: "disk"}},
		{"POST", "/v1/hosts/k8s/node-a:undrain", `{}`, &UndrainHostRequest{HostId: "k8s/node-a"}},
		{"POST", "/v1/hosts/sim/host-0001:drain", `{"region":"west"}`, &DrainHostRequest{HostId: "sim/host-0001", Region: "west"}},
	}
	for _, tc := range cases {
		rec.got = nil
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Errorf("%s %s: HTTP %d %s", tc.method, tc.path, w.Code, w.Body.String())
			continue
		}
		if !proto.Equal(rec.got, tc.want) {
			t.Errorf("%s %s reached the server as %v, want %v", tc.method, tc.path, rec.got, tc.want)
		}
	}
}
