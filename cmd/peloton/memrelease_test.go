package main

import (
	"testing"
	"time"
)

func TestReleaserDecides(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	r := releaser{at: t0}
	steps := []struct {
		count uint64
		busy  bool
		now   int
		want  bool
		why   string
	}{
		{0, false, 5, false, "nothing dropped"},
		{5000, false, 10, false, "dropping"},
		{20000, false, 15, false, "still dropping"},
		{20000, true, 35, false, "dropped many, but events still wait for the store"},
		{20000, false, 40, true, "dropped many, settled, 40s since the start"},
		{20000, false, 45, false, "nothing more"},
		{40000, false, 50, false, "dropping again"},
		{40000, false, 55, false, "settled, but 15s since the last release"},
		{40000, false, 71, true, "settled, 31s since the last release"},
		{45000, false, 105, false, "a few dropped"},
		{45000, false, 110, false, "settled, but only 5,000 since"},
		{100, false, 115, false, "a new engine: its count starts low"},
		{30000, false, 120, false, "the new engine drops many"},
		{30000, false, 125, true, "and settles: 29,900 since its start"},
	}
	for _, s := range steps {
		if got := r.check(s.count, s.busy, at(s.now)); got != s.want {
			t.Fatalf("count %d at %ds (%s): release %v, want %v", s.count, s.now, s.why, got, s.want)
		}
	}
}
