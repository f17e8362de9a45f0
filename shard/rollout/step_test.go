package rollout

import (
	"reflect"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/sla"
)

func TestUpdateStep(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running := func(g uint32) Gang { return Gang{Gang: g, Size: 1, Stale: true, Queued: true} }
	onTarget := func(g uint32) Gang { return Gang{Gang: g, Size: 1} }
	// oneDown is an SLA of n available instances, one of which may be down.
	oneDown := func(n uint32) *sla.Job { return &sla.Job{Limit: 1, Instances: up(n)} }
	cases := []struct {
		name string
		in   Input
		want Plan
	}{{
		name: "first batch of two",
		in:   Input{Gangs: []Gang{running(0), running(1), running(2)}, Instances: 3, Batch: 2},
		want: Plan{Restart: []uint32{0, 1}, InFlight: 2},
	}, {
		name: "batch 0 means all",
		in:   Input{Gangs: []Gang{running(0), running(1), running(2)}, Instances: 3},
		want: Plan{Restart: []uint32{0, 1, 2}, InFlight: 3},
	}, {
		name: "never queued instances take the config",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 1, Stale: true}, running(1)}, Instances: 2, Batch: 1},
		want: Plan{Relabel: []uint32{0}, Restart: []uint32{1}, Done: 1, InFlight: 1},
	}, {
		name: "in flight fills the batch",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Restarting: true, Updating: true}, running(1)},
			Instances: 2, Batch: 1},
		want: Plan{InFlight: 1},
	}, {
		name: "a gang bigger than the batch goes alone",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 4, Stale: true, Queued: true}}, Instances: 4, Batch: 2},
		want: Plan{Restart: []uint32{0}, InFlight: 4},
	}, {
		name: "settling counts in flight and forgets when it was healthy",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Updating: true, Settling: true, HealthySince: now.Add(-time.Second)}},
			Instances: 1, Batch: 1},
		want: Plan{InFlight: 1, ClearHealthy: []uint32{0}},
	}, {
		name: "available without min healthy is done",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 1, Updating: true}}, Instances: 1, Batch: 1},
		want: Plan{Settled: []uint32{0}, Done: 1, Complete: true},
	}, {
		name: "min healthy starts the clock",
		in: Input{Now: now, Gangs: []Gang{{Gang: 0, Size: 1, Updating: true}, running(1)},
			Instances: 2, Batch: 1, MinHealthy: 10 * time.Second},
		want: Plan{StartHealthy: []uint32{0}, InFlight: 1},
	}, {
		name: "min healthy not yet",
		in: Input{Now: now, Gangs: []Gang{{Gang: 0, Size: 1, Updating: true, HealthySince: now.Add(-9 * time.Second)}},
			Instances: 1, Batch: 1, MinHealthy: 10 * time.Second},
		want: Plan{InFlight: 1},
	}, {
		name: "min healthy reached",
		in: Input{Now: now, Gangs: []Gang{{Gang: 0, Size: 1, Updating: true, HealthySince: now.Add(-10 * time.Second)}, running(1)},
			Instances: 2, Batch: 1, MinHealthy: 10 * time.Second},
		want: Plan{Settled: []uint32{0}, Done: 1, Restart: []uint32{1}, InFlight: 1},
	}, {
		name: "the SLA holds the batch",
		in:   Input{Gangs: []Gang{running(0), running(1), running(2)}, Instances: 3, Batch: 3, SLA: oneDown(3)},
		want: Plan{Restart: []uint32{0}, InFlight: 1, Waiting: "waiting for SLA: 1/1 unavailable"},
	}, {
		name: "paused",
		in:   Input{Gangs: []Gang{onTarget(0), running(1)}, Instances: 2, Batch: 1, Paused: true},
		want: Plan{Done: 1, Waiting: "paused"},
	}, {
		name: "removed gangs go highest first, within the batch",
		in: Input{Gangs: []Gang{onTarget(0), onTarget(1), {Gang: 2, Size: 1, Removed: true}, {Gang: 3, Size: 1, Removed: true},
			{Gang: 4, Size: 1, Removed: true}}, Instances: 2, Batch: 2},
		want: Plan{Done: 2, Remove: []uint32{4, 3}, InFlight: 2},
	}, {
		name: "removal under the SLA, then restarts wait",
		in: Input{Gangs: []Gang{running(0), {Gang: 1, Size: 1, Removed: true}, {Gang: 2, Size: 1, Removed: true}},
			Instances: 1, Batch: 5, SLA: oneDown(3)},
		want: Plan{Remove: []uint32{2}, InFlight: 1, Waiting: "waiting for SLA: 1/1 unavailable"},
	}, {
		name: "gangs of two: the SLA is asked for both members",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 2, Stale: true, Queued: true}, {Gang: 1, Size: 2, Stale: true, Queued: true}},
			Instances: 4, Batch: 4, GangSize: 2, SLA: &sla.Job{Limit: 3, Instances: up(4)}},
		want: Plan{Restart: []uint32{0}, InFlight: 2, Waiting: "waiting for SLA: 2/3 unavailable"},
	}, {
		name: "stopping removed gangs keep the update open",
		in:   Input{Gangs: []Gang{onTarget(0), {Gang: 1, Size: 1, Removed: true, Stopping: true}}, Instances: 1, Batch: 1},
		want: Plan{Done: 1, InFlight: 1},
	}, {
		name: "ended removed gangs complete it",
		in:   Input{Gangs: []Gang{onTarget(0), {Gang: 1, Size: 1, Removed: true, Ended: true}}, Instances: 1, Batch: 1},
		want: Plan{Done: 1, Complete: true},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.in.SLA.Clone()
			if got := Step(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("\n got %+v\nwant %+v", got, c.want)
			}
			if !reflect.DeepEqual(c.in.SLA, before) {
				t.Errorf("the step changed its input's SLA: %+v, was %+v", c.in.SLA, before)
			}
		})
	}
}

// up returns n available instances, 0 to n-1.
func up(n uint32) []sla.Instance {
	out := make([]sla.Instance, n)
	for i := range out {
		out[i] = sla.Instance{ID: uint32(i), Available: true}
	}
	return out
}
