package federation

import (
	"context"
	"fmt"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Updates belong to a job: they are served by the job's region. Hosts
// belong to the region whose shard reports them.

// updateJob is the job an update id names: "<job>.<version>".
func updateJob(id string) (string, error) {
	job, _, ok := model.UpdateID(id).Parse()
	if !ok {
		return "", status.Errorf(codes.InvalidArgument, "update_id: %q: want <job id>.<version>", id)
	}
	return string(job), nil
}

// hostRegion finds the region of a host: the only region whose shard
// knows a host of that id. Host ids are unique
// within a region, not across regions (dev mode gives every region a
// "sim" cluster), so a host several regions know must be named with its
// region.
func (r *Router) hostRegion(ctx context.Context, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", status.Error(codes.InvalidArgument, "host_id: required")
	}
	req := &pb.ListHostsRequest{HostId: id}
	answers, errs := fanOut(r, ctx, func(ctx context.Context) (*pb.ListHostsResponse, error) {
		return pb.NewHostServiceClient(r.local()).ListHosts(ctx, req)
	},
		func(ctx context.Context, c grpc.ClientConnInterface) (*pb.ListHostsResponse, error) {
			return pb.NewHostServiceClient(c).ListHosts(ctx, req)
		})
	var found []string
	for _, reg := range sortedKeys(answers) {
		for _, h := range answers[reg].GetHosts() {
			if h.GetId() == id {
				found = append(found, reg)
				break
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", status.Errorf(codes.InvalidArgument, "region: host %s is in regions %s: name its region (--region)", id, strings.Join(found, ", "))
	case len(errs) > 0:
		var msgs []string
		for _, reg := range sortedKeys(errs) {
			msgs = append(msgs, fmt.Sprintf("%s: %s", reg, status.Convert(errs[reg]).Message()))
		}
		return "", status.Errorf(codes.Unavailable, "host %s not found in the reachable regions (%s)", id, strings.Join(msgs, "; "))
	}
	return "", status.Errorf(codes.NotFound, "host %s not found in any region", id)
}
