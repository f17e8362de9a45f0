package federation

import (
	"errors"
	"strings"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

func TestCheckRelocation(t *testing.T) {
	health := map[string]string{"west": "failed", "north": "alive", "south": "suspect"}
	relocation := func(edit func(req *pb.CreateJobRequest)) *pb.CreateJobRequest {
		req := &pb.CreateJobRequest{
			Spec: &pb.JobSpec{Name: "j", Pool: "/b", Region: "east", Labels: map[string]string{
				LabelRelocatedFrom: "j1@west", LabelRelocatedBy: "central"}},
			RequestId: moveRequestID("relocate", "j1"),
		}
		if edit != nil {
			edit(req)
		}
		return req
	}
	cases := []struct {
		name string
		req  *pb.CreateJobRequest
		want string // "" when allowed
	}{
		{"a relocation of a failed region's job", relocation(nil), ""},
		{"a new job", &pb.CreateJobRequest{Spec: &pb.JobSpec{Name: "new", Pool: "/b", Region: "east"}}, "creates only the jobs it relocates"},
		{"a malformed origin", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedFrom] = "j1" }), "want <job>@<region>"},
		{"relocated by another region", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedBy] = "north" }), "not the caller central"},
		{"no relocator", relocation(func(r *pb.CreateJobRequest) { delete(r.Spec.Labels, LabelRelocatedBy) }), "not the caller central"},
		{"another request id", relocation(func(r *pb.CreateJobRequest) { r.RequestId = "r-1" }), "is not the relocation of job j1"},
		{"for another region", relocation(func(r *pb.CreateJobRequest) { r.Spec.Region = "north" }), `to region "north"`},
		{"from an alive region", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedFrom] = "j1@north" }), "north, whose job j1 it relocates, is alive here"},
		{"from a suspect region", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedFrom] = "j1@south" }), "is suspect here"},
		{"from an unknown region", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedFrom] = "j1@nowhere" }), "is unknown here"},
		{"of its own job", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedFrom] = "j1@central" }), "relocating a job of central"},
		{"of this region's job", relocation(func(r *pb.CreateJobRequest) { r.Spec.Labels[LabelRelocatedFrom] = "j1@east" }), "relocating a job of east"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkRelocation("central", "east", c.req, func(r string) string { return health[r] })
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !errors.Is(err, ErrNotAMove) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("%v, want ErrNotAMove with %q", err, c.want)
			}
		})
	}
}

func TestCheckRegionStop(t *testing.T) {
	cases := []struct {
		name   string
		labels map[string]string
		ok     bool
	}{
		{"a job it relocated", map[string]string{LabelRelocatedFrom: "j1@west", LabelRelocatedBy: "central"}, true},
		{"a copy of its own job", map[string]string{LabelRelocatedFrom: "j1@central", LabelRelocatedBy: "north"}, true},
		{"another region's relocation", map[string]string{LabelRelocatedFrom: "j1@west", LabelRelocatedBy: "north"}, false},
		{"a job moved back from it", map[string]string{LabelFailedBackFrom: "j2@central"}, false},
		{"an ordinary job", nil, false},
	}
	for _, c := range cases {
		err := checkRegionStop("central", "j", c.labels)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrNotAMove) {
			t.Errorf("%s: %v, want allowed %v", c.name, err, c.ok)
		}
	}
}
