package sla

import (
	"slices"
	"testing"
)

func TestBudget(t *testing.T) {
	cases := []struct {
		in    string
		n     uint32
		limit uint32
		err   bool
	}{
		{"2", 20, 2, false},
		{"0", 20, 0, false},
		{"25%", 20, 5, false},
		{"25%", 3, 1, false}, // rounds down, never below one
		{"10%", 1000, 100, false},
		{"0%", 10, 0, false},
		{"100%", 7, 7, false},
		{"101%", 7, 0, true},
		{"", 1, 0, true},
		{"-1", 1, 0, true},
		{"two", 1, 0, true},
		{"5%%", 1, 0, true},
	}
	for _, c := range cases {
		b, err := ParseBudget(c.in)
		if (err != nil) != c.err {
			t.Errorf("ParseBudget(%q) error %v, want error %v", c.in, err, c.err)
			continue
		}
		if err == nil {
			if got := b.Limit(c.n); got != c.limit {
				t.Errorf("%q of %d: limit %d, want %d", c.in, c.n, got, c.limit)
			}
			if b.String() != c.in {
				t.Errorf("String() %q, want %q", b.String(), c.in)
			}
		}
	}
}

func up(ids ...uint32) []Instance {
	out := make([]Instance, len(ids))
	for i, id := range ids {
		out[i] = Instance{ID: id, Available: true}
	}
	return out
}

func TestEvaluate(t *testing.T) {
	five := up(0, 1, 2, 3, 4)
	withDown := up(0, 1, 2, 3, 4)
	withDown[1].Available = false
	withDisrupted := up(0, 1, 2, 3, 4)
	withDisrupted[3].Disrupted = true
	cases := []struct {
		name      string
		limit     uint32
		instances []Instance
		request   []uint32
		allowed   []uint32
		held      []uint32
		reason    string
	}{
		{"room for two", 2, five, []uint32{0, 1, 2}, []uint32{0, 1}, []uint32{2}, "waiting for SLA: 0/2 unavailable"},
		{"all fit", 3, five, []uint32{4, 2}, []uint32{4, 2}, nil, ""},
		{"an instance already down costs nothing", 1, withDown, []uint32{1, 0, 2}, []uint32{1}, []uint32{0, 2}, "waiting for SLA: 1/1 unavailable"},
		{"a disruption in flight counts", 2, withDisrupted, []uint32{0, 1}, []uint32{0}, []uint32{1}, "waiting for SLA: 1/2 unavailable"},
		{"the disrupted one again is free", 1, withDisrupted, []uint32{3}, []uint32{3}, nil, ""},
		{"limit zero holds the healthy", 0, withDown, []uint32{0, 1}, []uint32{1}, []uint32{0}, "waiting for SLA: 1/0 unavailable"},
		{"unknown instance is held", 5, five, []uint32{9}, nil, []uint32{9}, "instance 9 is not a running instance of the job"},
		{"duplicates asked once", 1, five, []uint32{2, 2, 3}, []uint32{2}, []uint32{3}, "waiting for SLA: 0/1 unavailable"},
		{"over budget already", 1, func() []Instance {
			in := up(0, 1, 2)
			in[0].Available, in[1].Available = false, false
			return in
		}(), []uint32{2}, nil, []uint32{2}, "waiting for SLA: 2/1 unavailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Evaluate(c.limit, c.instances, c.request)
			if !slices.Equal(d.Allowed, c.allowed) || !slices.Equal(d.Held, c.held) {
				t.Fatalf("allowed %v held %v, want %v %v", d.Allowed, d.Held, c.allowed, c.held)
			}
			if d.Reason() != c.reason {
				t.Fatalf("reason %q, want %q", d.Reason(), c.reason)
			}
		})
	}
}

// Two operations asking one after the other never take more than the
// limit together: the first one's instances count as disrupted for the
// second.
func TestSequentialRequestsShareTheBudget(t *testing.T) {
	in := up(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	first := Evaluate(2, in, []uint32{0, 1, 2})
	for _, id := range first.Allowed {
		in[id].Disrupted = true
	}
	second := Evaluate(2, in, []uint32{5, 6})
	if len(first.Allowed)+len(second.Allowed) != 2 || len(second.Allowed) != 0 {
		t.Fatalf("first %v, second %v: more than 2 taken", first.Allowed, second.Allowed)
	}
}
