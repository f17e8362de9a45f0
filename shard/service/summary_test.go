package service

import (
	"context"
	"slices"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
)

// ListRegions lists the region's host label values only when asked, and
// ListPools lists only the pools with demand or allocation when asked:
// the summary another region's gather reads.
func TestRegionSummaryForTheFederation(t *testing.T) {
	ts := newTestShard(t)
	ctx := context.Background()
	plain, err := ts.s.ListRegions(ctx, &pb.ListRegionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.GetRegions()[0].GetHostLabels(); len(got) != 0 {
		t.Errorf("host labels listed unasked: %v", got)
	}
	var hosts []string
	ts.until("both hosts up, with their labels", func() bool {
		resp, err := ts.s.ListRegions(ctx, &pb.ListRegionsRequest{HostLabels: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range resp.GetRegions()[0].GetHostLabels() {
			if l.GetKey() == model.LabelHost {
				hosts = l.GetValues()
			}
		}
		return len(hosts) == 2
	})
	if !slices.Equal(hosts, []string{"sim/h1", "sim/h2"}) {
		t.Errorf("%s values %v, want both hosts sorted", model.LabelHost, hosts)
	}

	for _, path := range []string{"/busy", "/idle"} {
		if _, err := ts.s.CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: path, Reservation: &pb.Resources{Cpu: 1, MemMb: 64}}}); err != nil {
			t.Fatal(err)
		}
	}
	spec := jobSpec(2)
	spec.Pool = "/busy"
	if _, err := ts.s.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec}); err != nil {
		t.Fatal(err)
	}
	var inUse []string
	ts.until("the busy pool in use", func() bool {
		resp, err := ts.s.ListPools(ctx, &pb.ListPoolsRequest{InUse: true})
		if err != nil {
			t.Fatal(err)
		}
		inUse = inUse[:0]
		for _, p := range resp.GetPools() {
			inUse = append(inUse, p.GetPath())
		}
		return slices.Contains(inUse, "/busy")
	})
	if !slices.Equal(inUse, []string{"/", "/busy"}) {
		t.Errorf("pools in use %v, want / and /busy", inUse)
	}
	all, err := ts.s.ListPools(ctx, &pb.ListPoolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(all.GetPools()); n != 3 {
		t.Errorf("%d pools listed, want all 3", n)
	}
}
