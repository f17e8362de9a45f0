package federation

import (
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// Relocation keeps only the instances that had not succeeded, renumbered
// from 0; each keeps its override.
func TestRenumberOverrides(t *testing.T) {
	ovs := []*pb.InstanceOverride{
		{Instances: "0-3", Task: &pb.TaskSpec{Command: "a"}},
		{Instances: "5,7-9", Task: &pb.TaskSpec{Command: "b"}},
		{Instances: "4", Task: &pb.TaskSpec{Command: "c"}},
	}
	// Instances 1, 4 and 8 succeeded: old 0,2,3,5,6,7,9 become 0..6.
	got, err := renumberOverrides(ovs, []uint32{8, 1, 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ instances, command string }{{"0-2", "a"}, {"3,5-6", "b"}}
	if len(got) != len(want) {
		t.Fatalf("got %d overrides: %v", len(got), got)
	}
	for i, w := range want {
		if got[i].GetInstances() != w.instances || got[i].GetTask().GetCommand() != w.command {
			t.Errorf("override %d: %q %q, want %q %q", i, got[i].GetInstances(), got[i].GetTask().GetCommand(), w.instances, w.command)
		}
	}
	if _, err := renumberOverrides([]*pb.InstanceOverride{{Instances: "x"}}, nil); err == nil {
		t.Fatal("a bad range was carried over")
	}
}
