package migration

import (
	"reflect"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/sla"
)

func TestMigrateStep(t *testing.T) {
	// stale runs on the source; onTarget already runs on the target.
	stale := func(g uint32) Gang {
		return Gang{Gang: g, Size: 1, Place: PlacedElsewhere, Available: true}
	}
	onTarget := func(g uint32) Gang {
		return Gang{Gang: g, Size: 1, Place: PlacedOnTarget, Available: true}
	}
	withSurge := func(g Gang, s SurgeState) Gang { g.Surge = s; return g }
	moving := func(g uint32) Gang { return Gang{Gang: g, Size: 1, Place: Unplaced, Move: Restarted} }
	// down is an SLA of n instances, all available, limit of them may be down.
	down := func(limit, n uint32) *sla.Job {
		j := &sla.Job{Limit: limit}
		for i := range n {
			j.Instances = append(j.Instances, sla.Instance{ID: i, Available: true})
		}
		return j
	}
	cases := []struct {
		name string
		in   Input
		want Plan
	}{{
		name: "first batch stops and restarts on the target",
		in:   Input{Gangs: []Gang{stale(0), stale(1), stale(2)}, Batch: 2, Restart: true},
		want: Plan{Restart: []uint32{0, 1}, Total: 3, InFlight: 2},
	}, {
		name: "batch 0 means all",
		in:   Input{Gangs: []Gang{stale(0), stale(1)}, Restart: true},
		want: Plan{Restart: []uint32{0, 1}, Total: 2, InFlight: 2},
	}, {
		name: "the SLA holds the rest of the batch",
		in:   Input{Gangs: []Gang{stale(0), stale(1), stale(2)}, Batch: 3, Restart: true, SLA: down(1, 3)},
		want: Plan{Restart: []uint32{0}, Total: 3, InFlight: 1, Waiting: "waiting for SLA: 1/1 unavailable"},
	}, {
		name: "in flight fills the batch",
		in:   Input{Gangs: []Gang{moving(0), stale(1)}, Batch: 1, Restart: true},
		want: Plan{Total: 2, InFlight: 1},
	}, {
		name: "a moved gang available on the target is done",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: PlacedOnTarget, Move: Restarted, Available: true}, stale(1)},
			Batch: 1, Restart: true},
		want: Plan{Moved: []uint32{0}, Restart: []uint32{1}, Total: 2, Done: 1, InFlight: 1},
	}, {
		name: "on the target but not available yet is in flight",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: PlacedOnTarget, Move: Restarted}}, Batch: 1, Restart: true},
		want: Plan{Total: 1, InFlight: 1},
	}, {
		name: "instances already on the target are done; all done is complete",
		in:   Input{Gangs: []Gang{onTarget(0), onTarget(1)}, Restart: true},
		want: Plan{Total: 2, Done: 2, Complete: true},
	}, {
		name: "unplaced gangs are pinned to the target without a disruption",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: Unplaced}, stale(1)}, Batch: 1, Restart: true, SLA: down(0, 2)},
		want: Plan{Pin: []uint32{0}, Total: 2, Waiting: "waiting for SLA: 0/0 unavailable"},
	}, {
		name: "pinned gangs waiting are not in flight",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: Unplaced, Move: Pinned}, stale(1)}, Batch: 1, Restart: true},
		want: Plan{Restart: []uint32{1}, Total: 2, InFlight: 1},
	}, {
		name: "batch jobs: running tasks finish where they are",
		in:   Input{Gangs: []Gang{stale(0), {Gang: 1, Size: 1, Place: Unplaced}, {Gang: 2, Size: 1, Place: Finished}}},
		want: Plan{Pin: []uint32{1}, Total: 3, Done: 1, Finishing: 1},
	}, {
		name: "batch jobs: a pinned task counts moved once placed, or once ended",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: PlacedOnTarget, Move: Pinned}, {Gang: 1, Size: 1, Place: Finished, Move: Pinned}},
			SettleOnPlace: true},
		want: Plan{Moved: []uint32{0, 1}, Total: 2, Done: 2, Complete: true},
	}, {
		name: "surge: replacements start first, within the batch, without asking the SLA",
		in:   Input{Gangs: []Gang{stale(0), stale(1), stale(2)}, Batch: 2, Surge: true, Restart: true, SLA: down(0, 3)},
		want: Plan{StartSurge: []uint32{0, 1}, Total: 3, InFlight: 2},
	}, {
		name: "surge: a gang waits for its replacement",
		in: Input{Gangs: []Gang{withSurge(stale(0), SurgeStarting), stale(1)},
			Batch: 1, Surge: true, Restart: true},
		want: Plan{Total: 2, InFlight: 1},
	}, {
		name: "surge: with its replacement available the gang stops, under the SLA",
		in: Input{Gangs: []Gang{withSurge(stale(0), SurgeAvailable), withSurge(stale(1), SurgeAvailable), stale(2)},
			Batch: 2, Surge: true, Restart: true, SLA: down(1, 3)},
		want: Plan{Restart: []uint32{0}, Total: 3, InFlight: 2, Waiting: "waiting for SLA: 1/1 unavailable"},
	}, {
		name: "surge: moved and available, the replacement goes",
		in: Input{Gangs: []Gang{withSurge(Gang{Gang: 0, Size: 1, Place: PlacedOnTarget, Move: Restarted, Available: true}, SurgeAvailable)},
			Batch: 1, Surge: true, Restart: true},
		want: Plan{Moved: []uint32{0}, DropSurge: []uint32{0}, Total: 1, Done: 1, InFlight: 1},
	}, {
		name: "surge: complete only once every replacement ended; one stopping fills the batch",
		in:   Input{Gangs: []Gang{withSurge(onTarget(0), SurgeStopping), stale(1)}, Batch: 1, Surge: true, Restart: true},
		want: Plan{Total: 2, Done: 1, InFlight: 1},
	}, {
		name: "paused: nothing new moves, in flight settles",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: PlacedOnTarget, Move: Restarted, Available: true}, stale(1), {Gang: 2, Size: 1, Place: Unplaced}},
			Batch: 1, Restart: true, Paused: true},
		want: Plan{Moved: []uint32{0}, Total: 3, Done: 1, Waiting: "paused"},
	}, {
		name: "too many failures on the target stop it",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: PlacedOnTarget, Move: Restarted, Failures: 3, Why: "image pull failed"}, stale(1)},
			Batch: 2, Restart: true, MaxFailures: 3},
		want: Plan{Total: 2, InFlight: 1, Stuck: "instance 0 failed 3 times on the target: image pull failed",
			Waiting: "stopped: instance 0 failed 3 times on the target: image pull failed"},
	}, {
		name: "no host on the target for too long stops it",
		in: Input{Gangs: []Gang{{Gang: 0, Size: 1, Place: Unplaced, Move: Restarted, PendingFor: 90 * time.Second, Why: "0/2 hosts: 2 insufficient cpu"}, stale(1)},
			Batch: 2, Restart: true, StallAfter: time.Minute},
		want: Plan{Total: 2, InFlight: 1, Stuck: "instance 0 found no host on the target for 1m30s: 0/2 hosts: 2 insufficient cpu",
			Waiting: "stopped: instance 0 found no host on the target for 1m30s: 0/2 hosts: 2 insufficient cpu"},
	}, {
		name: "a gang bigger than the batch goes alone",
		in:   Input{Gangs: []Gang{{Gang: 0, Size: 4, Place: PlacedElsewhere}}, Batch: 2, Restart: true},
		want: Plan{Restart: []uint32{0}, Total: 4, InFlight: 4},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var limit uint32
			if c.in.SLA != nil {
				limit = c.in.SLA.Limit
			}
			if got := Step(c.in); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("\n got %+v\nwant %+v", got, c.want)
			}
			// The step asks a copy: every instance is still up.
			if c.in.SLA != nil && c.in.SLA.Room() != limit {
				t.Errorf("the step changed its input's SLA: room %d of %d", c.in.SLA.Room(), limit)
			}
		})
	}
}
