package policy

import (
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// Work routed since the states were gathered counts as held: once the
// jobs routed to a region fill its reservation left in the pool, the next
// job goes to the region with room left, and free capacity counts what
// was routed too.
func TestChooseRegionCountsWorkRoutedSinceTheStates(t *testing.T) {
	cpu := func(cores int64) model.Resources { return model.Resources{MilliCPU: cores * 1000} }
	regions := []RegionState{
		{Name: "a", Capacity: cpu(100), Pools: map[string]PoolUsage{"/p": {Allocation: cpu(2)}}},
		{Name: "b", Capacity: cpu(100), Pools: map[string]PoolUsage{"/p": {Allocation: cpu(5)}}},
	}
	shares := Shares{"a": {"/p": {Reservation: cpu(10), Limit: cpu(50)}}, "b": {"/p": {Reservation: cpu(10), Limit: cpu(50)}}}
	for _, c := range []struct {
		name   string
		routed map[string]Routed
		pool   string
		want   string
	}{
		{name: "nothing routed: a has more reservation left", pool: "/p", want: "a"},
		{name: "4 cores routed to a: b has more left", pool: "/p", routed: map[string]Routed{"a": {Pool: cpu(4), Region: cpu(4)}}, want: "b"},
		{name: "3 cores routed to a: tied on reservation and limit left, b has more free capacity", pool: "/p",
			routed: map[string]Routed{"a": {Pool: cpu(3), Region: cpu(3)}}, want: "b"},
		{name: "another pool's work routed to a counts against its free capacity only", pool: "/q",
			routed: map[string]Routed{"a": {Pool: cpu(0), Region: cpu(1)}}, want: "b"},
	} {
		req := JobRequest{Pool: c.pool, PerTask: cpu(1), Instances: 1, Routed: c.routed}
		got, err := ChooseRegion(req, regions, shares)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Region != c.want {
			t.Errorf("%s: chose %s, want %s (%v)", c.name, got.Region, c.want, got.Reasons)
		}
	}
}
