package sla

import (
	"reflect"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestAvailable(t *testing.T) {
	running := func(ready, health model.HealthState) *model.TaskRuntime {
		return &model.TaskRuntime{State: model.TaskRunning, Ready: ready, Health: health}
	}
	cases := []struct {
		name string
		t    *model.TaskRuntime
		want bool
	}{
		{"no run", nil, false},
		{"pending", &model.TaskRuntime{State: model.TaskPending}, false},
		{"launched, not running yet", &model.TaskRuntime{State: model.TaskLaunching}, false},
		{"running without probes", running(model.HealthNone, model.HealthNone), true},
		{"readiness says healthy, health check not", running(model.HealthHealthy, model.HealthUnhealthy), true},
		{"readiness says unhealthy", running(model.HealthUnhealthy, model.HealthHealthy), false},
		{"health check only, healthy", running(model.HealthNone, model.HealthHealthy), true},
		{"health check only, unhealthy", running(model.HealthNone, model.HealthUnhealthy), false},
	}
	for _, c := range cases {
		if got := Available(c.t); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Each yes counts for the questions after it; a no changes nothing; the
// job a step was given is left alone by asking its clone.
func TestJobDisruptCountsEachYes(t *testing.T) {
	orig := &Job{Limit: 2, Instances: []Instance{{ID: 0, Available: true}, {ID: 1, Available: true}, {ID: 2, Available: true}, {ID: 3}}}
	j := orig.Clone()
	if got := j.Room(); got != 1 {
		t.Fatalf("room with one of four down and a limit of 2: %d, want 1", got)
	}
	if ok, why := j.Disrupt([]uint32{0}); !ok {
		t.Fatalf("the first disruption: held (%s)", why)
	}
	if ok, why := j.Disrupt([]uint32{1}); ok || why != "waiting for SLA: 2/2 unavailable" {
		t.Fatalf("the second: %v %q, want held with the reason", ok, why)
	}
	if ok, _ := j.Disrupt([]uint32{3}); !ok {
		t.Fatal("an instance already down costs nothing and is allowed")
	}
	if ok, _ := j.Disrupt([]uint32{1, 2}); ok {
		t.Fatal("a gang of two with no room is allowed")
	}
	if j.Room() != 0 {
		t.Fatalf("room after: %d", j.Room())
	}
	want := &Job{Limit: 2, Instances: []Instance{{ID: 0, Available: true}, {ID: 1, Available: true}, {ID: 2, Available: true}, {ID: 3}}}
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("asking the clone changed the original: %+v", orig)
	}
	var none *Job
	if ok, _ := none.Disrupt([]uint32{7}); !ok || none.Clone() != nil {
		t.Fatal("a nil job sets no limit")
	}
	if got := Gang(3, 2, 3); !reflect.DeepEqual(got, []uint32{6, 7, 8}) {
		t.Fatalf("Gang(3, 2, 3) = %v", got)
	}
	if got := Gang(0, 4, 1); !reflect.DeepEqual(got, []uint32{4}) {
		t.Fatalf("Gang(0, 4, 1) = %v", got)
	}
}
