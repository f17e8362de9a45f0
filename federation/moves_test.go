package federation

import (
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

func TestMovedFromLabels(t *testing.T) {
	for _, tc := range []struct {
		labels      map[string]string
		region, job string
	}{
		{map[string]string{LabelRelocatedFrom: "j1@central"}, "central", "j1"},
		{map[string]string{LabelFailedBackFrom: "j2@east", "team": "x"}, "east", "j2"},
		{map[string]string{LabelRelocatedFrom: "no-region"}, "", ""},
		{map[string]string{LabelRelocatedFrom: "j3@"}, "", ""},
		{nil, "", ""},
	} {
		m := movedFrom(tc.labels)
		if m.GetRegion() != tc.region || m.GetJobId() != tc.job {
			t.Errorf("movedFrom(%v) = %v, want %s@%s", tc.labels, m, tc.job, tc.region)
		}
	}
	if movedTo(&pb.Replica{}) != nil {
		t.Error("a replica never relocated moved somewhere")
	}
	if m := movedTo(&pb.Replica{RelocatedRegion: "west", RelocatedJobId: "j9"}); m.GetRegion() != "west" || m.GetJobId() != "j9" {
		t.Errorf("movedTo = %v", m)
	}
}
