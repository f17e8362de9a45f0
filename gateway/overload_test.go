package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// slowSystem answers GetVersion once release is closed; entered counts
// the calls that reached it.
type slowSystem struct {
	pb.UnimplementedSystemServiceServer
	release chan struct{}
	entered chan struct{}
}

func (s *slowSystem) GetVersion(ctx context.Context, _ *pb.GetVersionRequest) (*pb.GetVersionResponse, error) {
	s.entered <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &pb.GetVersionResponse{Version: "slow"}, nil
}

func TestOverloadShedsWithRetryHint(t *testing.T) {
	sys := &slowSystem{release: make(chan struct{}), entered: make(chan struct{}, 16)}
	base := startWith(t, Limits{InFlight: 2, InFlightWait: 20 * time.Millisecond}, func(s grpc.ServiceRegistrar) {
		pb.RegisterSystemServiceServer(s, sys)
	})
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewSystemServiceClient(conn)
	ctx := context.Background()

	// Two calls take both slots.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.GetVersion(ctx, &pb.GetVersionRequest{})
			errs <- err
		}()
	}
	<-sys.entered
	<-sys.entered

	// A third waits its 20ms, then is refused with a hint.
	start := time.Now()
	_, err = client.GetVersion(ctx, &pb.GetVersionRequest{})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("third call: %v, want ResourceExhausted", err)
	}
	if d, ok := RetryDelay(err); !ok || d < time.Second {
		t.Fatalf("retry hint %v %v, want at least 1s", d, ok)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("refused after %v, before its wait", waited)
	}

	// Over HTTP: 429 with Retry-After.
	code, h, msg := call(t, "GET", base+"/v1/version", "", nil)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "1" || !strings.Contains(msg, "busy") {
		t.Fatalf("HTTP: %d Retry-After %q %q, want 429 with Retry-After 1", code, h.Get("Retry-After"), msg)
	}

	// Slots free up: calls are served again, and those in flight finished.
	close(sys.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a call in flight: %v", err)
		}
	}
	if _, err := client.GetVersion(ctx, &pb.GetVersionRequest{}); err != nil {
		t.Fatalf("after the load: %v", err)
	}
}

func TestGRPCRequestSizeFollowsHTTP(t *testing.T) {
	base, _ := startOpen(t, Limits{RequestBytes: 4 << 10, SpecRequestBytes: 64 << 10})
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := pb.NewJobServiceClient(conn)
	ctx := context.Background()
	_, err = jobs.StopJob(ctx, &pb.StopJobRequest{Id: strings.Repeat("x", 8<<10)})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "more than the limit of 4096") {
		t.Fatalf("an 8 KiB stop: %v", err)
	}
	spec := &pb.JobSpec{Name: "a", Labels: map[string]string{"big": strings.Repeat("x", 8<<10)}}
	if _, err := jobs.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec}); err != nil {
		t.Fatalf("an 8 KiB create, under the spec limit: %v", err)
	}
	spec.Labels["big"] = strings.Repeat("x", 100<<10)
	if _, err := jobs.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a 100 KiB create, over the gRPC server's limit: %v", err)
	}
}
