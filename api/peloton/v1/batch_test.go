package pelotonv1

import (
	"strings"
	"testing"
)

func TestRequestJobID(t *testing.T) {
	a := &JobSpec{Name: "a", Instances: 1}
	b := &JobSpec{Name: "b", Instances: 1}
	id := RequestJobID("r1", 0, a)
	if len(id) != 36 || id[14] != '8' || !strings.ContainsAny(id[19:20], "89ab") {
		t.Fatalf("%s is not a UUID of version 8", id)
	}
	for _, c := range []struct {
		what  string
		other string
		same  bool
	}{
		{"the same request, position and spec", RequestJobID("r1", 0, &JobSpec{Name: "a", Instances: 1}), true},
		{"another position", RequestJobID("r1", 1, a), false},
		{"another spec", RequestJobID("r1", 0, b), false},
		{"another request", RequestJobID("r2", 0, a), false},
		{"a request id that shares a prefix", RequestJobID("r", 10, a), false},
	} {
		if (c.other == id) != c.same {
			t.Errorf("%s: %s against %s", c.what, c.other, id)
		}
	}
	// The jobs of one request share the first 48 bits; another request's
	// do not.
	if RequestJobID("r1", 7, b)[:13] != id[:13] || RequestJobID("r2", 0, a)[:13] == id[:13] {
		t.Errorf("prefixes: %s %s %s", id, RequestJobID("r1", 7, b), RequestJobID("r2", 0, a))
	}
}

func TestCheckRequestID(t *testing.T) {
	for id, ok := range map[string]bool{"": true, "cli-0f3a": true, "a.b_c:d-e": true, strings.Repeat("x", 128): true,
		strings.Repeat("x", 129): false, "a b": false, "é": false, "a/b": false} {
		if got := CheckRequestID(id) == ""; got != ok {
			t.Errorf("%q: %q", id, CheckRequestID(id))
		}
	}
}

func TestSpecPositions(t *testing.T) {
	r := &CreateJobsRequest{Jobs: []*JobSpec{{}, {}, {}}}
	if p, msg := r.SpecPositions(); msg != "" || len(p) != 3 || p[2] != 2 {
		t.Fatalf("%v %q", p, msg)
	}
	r.Positions = []uint32{5, 0, 9}
	if p, msg := r.SpecPositions(); msg != "" || p[0] != 5 || p[2] != 9 {
		t.Fatalf("%v %q", p, msg)
	}
	for _, bad := range [][]uint32{{1}, {1, 1, 2}, {0, 1, MaxJobsPerRequest}} {
		r.Positions = bad
		if _, msg := r.SpecPositions(); msg == "" {
			t.Errorf("%v accepted", bad)
		}
	}
}
