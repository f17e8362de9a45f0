package gateway

import (
	"context"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// BenchmarkGuard measures a unary call through the gateway: open
// (plaintext, no authentication: dev mode) against secured (TLS, a bearer
// token looked up, the policy decided, a mutation audited).
//
//	go test -run '^$' -bench Guard ./gateway
func BenchmarkGuard(b *testing.B) {
	ctx := context.Background()
	secured := startSecured(b)
	open, err := New(Config{Addr: "127.0.0.1:0", Audit: &memAudit{}, Register: func(s grpc.ServiceRegistrar) {
		pb.RegisterJobServiceServer(s, secured.shard)
	}})
	if err != nil {
		b.Fatal(err)
	}
	octx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- open.Serve(octx) }()
	b.Cleanup(func() { cancel(); <-done })
	plain, err := grpc.NewClient(open.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	for _, c := range []struct {
		name string
		conn *grpc.ClientConn
	}{{"open", plain}, {"secured", secured.dial(b, "tok-root", "")}} {
		jobs := pb.NewJobServiceClient(c.conn)
		b.Run(c.name+"/read", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := jobs.ListJobs(ctx, &pb.ListJobsRequest{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/mutation", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := jobs.StopJob(ctx, &pb.StopJobRequest{Id: "in-a"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
