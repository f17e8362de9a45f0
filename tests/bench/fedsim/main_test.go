package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestSmall runs the whole simulation at its small size. run itself
// checks what must hold: every pool split among every region and each
// reservation split whole, every routed job held by the region that
// accepted it, every job of the lost region relocated once and each of its
// tasks running exactly once elsewhere, gossip traffic counted.
func TestSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three regions")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := run(ctx, sizes["small"], t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	s := sizes["small"]
	if res.Pass.Pools != s.Pools || res.Pass.Regions != s.Regions {
		t.Errorf("pass over %d pools × %d regions, want %d × %d", res.Pass.Pools, res.Pass.Regions, s.Pools, s.Regions)
	}
	if res.Failover.Tasks != s.JobsPerRegion*s.TasksPerJob || res.Failover.Running < res.Failover.Detected {
		t.Errorf("failover: %d tasks, running after %s, detected after %s", res.Failover.Tasks, res.Failover.Running, res.Failover.Detected)
	}
	routed := 0
	for _, n := range res.Route.PolicyBy {
		routed += n
	}
	if routed != s.RouteJobs || res.Route.Policy <= 0 || res.Route.NoOp <= 0 {
		t.Errorf("routing: %d jobs routed by the policy of %d, %.0f/s, no-op %.0f/s", routed, s.RouteJobs, res.Route.Policy, res.Route.NoOp)
	}
	batched := 0
	for _, n := range res.Route.BatchBy {
		batched += n
	}
	if batched != s.BatchJobs || res.Route.Batch <= 0 {
		t.Errorf("routing through CreateJobs: %d jobs of %d, %.0f/s", batched, s.BatchJobs, res.Route.Batch)
	}
	var out strings.Builder
	res.print(&out)
	for _, want := range []string{"global entitlement pass", "× one region", "× no-op", "× single creates (policy)", "relocation × creation", "× baseline"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
