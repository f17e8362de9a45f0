package model

import (
	"reflect"
	"testing"
)

// The index finds each instance's override; where ranges overlap (never in
// a validated spec) the later override wins. Merge replaces set fields,
// merges env and keeps zero amounts of the job's task.
func TestOverrideIndex(t *testing.T) {
	spec := &JobSpec{
		Instances: 10,
		Task:      TaskSpec{Command: "base", Env: map[string]string{"A": "1"}, Resources: Resources{MilliCPU: 1000, MemMB: 10}},
		Overrides: []InstanceOverride{
			{Instances: []InstanceRange{{0, 2}, {7, 7}}, Task: TaskSpec{Env: map[string]string{"B": "2"}, Resources: Resources{MilliCPU: 4000}}},
			{Instances: []InstanceRange{{5, 5}}, Task: TaskSpec{Command: "five"}},
		},
	}
	x := NewOverrideIndex(spec)
	want := map[uint32]int{0: 0, 1: 0, 2: 0, 3: -1, 4: -1, 5: 1, 6: -1, 7: 0, 8: -1, 9: -1}
	for inst, w := range want {
		got := x.Lookup(inst)
		if (w < 0) != (got == nil) || (w >= 0 && got != &spec.Overrides[w]) {
			t.Errorf("instance %d: override %v, want %d", inst, got, w)
		}
	}
	task := x.TaskFor(spec, 1)
	if task.Command != "base" || !reflect.DeepEqual(task.Env, map[string]string{"A": "1", "B": "2"}) || task.Resources != (Resources{MilliCPU: 4000, MemMB: 10}) {
		t.Errorf("merged task of instance 1: %+v", task)
	}
	if spec.Task.Env["B"] != "" {
		t.Error("merging changed the job's env")
	}
	if r := spec.Overrides[0].MergeResources(spec.Task.Resources); r != task.Resources {
		t.Errorf("MergeResources %+v, Merge %+v", r, task.Resources)
	}

	spec.Overrides = append(spec.Overrides, InstanceOverride{Instances: []InstanceRange{{1, 5}}, Task: TaskSpec{Command: "late"}})
	x = NewOverrideIndex(spec)
	for inst, w := range map[uint32]int{0: 0, 1: 2, 5: 2, 6: -1, 7: 0} {
		got := x.Lookup(inst)
		if (w < 0) != (got == nil) || (w >= 0 && got != &spec.Overrides[w]) {
			t.Errorf("overlapping: instance %d: override %v, want %d", inst, got, w)
		}
	}
}

func TestUpdateIDRoundTrip(t *testing.T) {
	id := MakeUpdateID("0f1e-ab", 12)
	job, v, ok := id.Parse()
	if !ok || job != "0f1e-ab" || v != 12 {
		t.Fatalf("%s parsed as %q %d %v", id, job, v, ok)
	}
	for _, bad := range []UpdateID{"", "job", ".3", "job.0", "job.x"} {
		if _, _, ok := bad.Parse(); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
