package federation

import (
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/protobuf/proto"
)

// A request with a region field that names neither a region nor its
// routing key (a pool's migration) goes to the local region; one without a
// region field still needs its key.
func TestDestOfEmptyKey(t *testing.T) {
	for _, c := range []struct {
		method string
		req    proto.Message
		want   dest
		err    bool
	}{
		{pb.JobService_StartMigration_FullMethodName, &pb.StartMigrationRequest{Pool: "/batch", ToCluster: "kube"}, dest{}, false},
		{pb.JobService_StartMigration_FullMethodName, &pb.StartMigrationRequest{JobId: "j1", ToCluster: "kube"}, dest{job: "j1"}, false},
		{pb.JobService_StartMigration_FullMethodName, &pb.StartMigrationRequest{Pool: "/b", Region: "west"}, dest{region: "west"}, false},
		{pb.JobService_GetJob_FullMethodName, &pb.GetJobRequest{}, dest{}, true},
	} {
		m := methods[c.method]
		if m == nil {
			t.Fatalf("%s is not forwarded", c.method)
		}
		got, err := m.route.destOf(c.req.ProtoReflect())
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s %v: %+v, %v", c.method, c.req, got, err)
		}
	}
}
