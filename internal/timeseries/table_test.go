package timeseries

import (
	"testing"
	"time"
)

func TestTiers(t *testing.T) {
	for _, tc := range []struct {
		window, every time.Duration
		want          []Tier
	}{
		{7 * 24 * time.Hour, 10 * time.Second, []Tier{{10 * time.Second, time.Hour}, {time.Minute, 24 * time.Hour}, {10 * time.Minute, 7 * 24 * time.Hour}}},
		{6 * time.Hour, 10 * time.Second, []Tier{{10 * time.Second, time.Hour}, {time.Minute, 6 * time.Hour}, {10 * time.Minute, 6 * time.Hour}}},
		{30 * time.Minute, 10 * time.Second, []Tier{{10 * time.Second, 30 * time.Minute}, {time.Minute, 30 * time.Minute}, {10 * time.Minute, 30 * time.Minute}}},
		{24 * time.Hour, 2 * time.Minute, []Tier{{2 * time.Minute, time.Hour}, {10 * time.Minute, 24 * time.Hour}}},
		{time.Hour, time.Second, []Tier{{time.Second, time.Hour}, {time.Minute, time.Hour}, {10 * time.Minute, time.Hour}}},
	} {
		got := Tiers(tc.window, tc.every)
		if len(got) != len(tc.want) {
			t.Fatalf("Tiers(%v, %v) = %v, want %v", tc.window, tc.every, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("Tiers(%v, %v) = %v, want %v", tc.window, tc.every, got, tc.want)
			}
		}
	}
}

// TestBoundedMemory: thirty days of samples every 10 s into a week's
// window hold no more than a table's Bytes, the same once the window is
// full (eight days) as after thirty, and reads return at most the tiers' points.
func TestBoundedMemory(t *testing.T) {
	const cols = 25
	tiers := Tiers(7*24*time.Hour, 10*time.Second)
	tab := NewTable(cols, tiers)
	row := make([]int64, cols)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	var afterEightDays int
	for i := 0; at.Before(t0.Add(30 * 24 * time.Hour)); i++ {
		for c := range row {
			row[c] = int64(i + c)
		}
		tab.Add(at, row)
		at = at.Add(10 * time.Second)
		if at.Equal(t0.Add(8 * 24 * time.Hour)) {
			afterEightDays = tab.held()
		}
	}
	if held, bound := tab.held(), tab.Bytes(); held > bound || held != afterEightDays {
		t.Fatalf("holds %d bytes after 30 days, %d after 8; bound %d", held, afterEightDays, bound)
	}
	// 360 + 1440 + 1008 points of 26 words, plus the open sums.
	if want := (360+1440+1008)*(cols+1)*8 + 3*cols*8; tab.Bytes() != want {
		t.Fatalf("Bytes() = %d, want %d", tab.Bytes(), want)
	}
	pts := tab.Points(time.Time{})
	if n := len(pts); n > 360+1440+1008+3 {
		t.Fatalf("%d points read", n)
	}
	if first := pts[0].T; first.Before(at.Add(-7*24*time.Hour - 10*time.Minute)) {
		t.Fatalf("oldest point %v is older than the window before %v", first, at)
	}
}

// TestDownsampling: each stretch of time comes at its tier's resolution,
// as the mean of the samples in each step, in time order with no overlap.
func TestDownsampling(t *testing.T) {
	tab := NewTable(2, Tiers(3*24*time.Hour, 10*time.Second))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := t0.Add(2 * 24 * time.Hour)
	for at := t0; at.Before(end); at = at.Add(10 * time.Second) {
		s := int64(at.Sub(t0) / time.Second)
		// Column 0 is the sample's second, column 1 a constant.
		tab.Add(at, []int64{s, 7})
	}
	now := end.Add(-10 * time.Second)
	pts := tab.Points(time.Time{})
	for i, p := range pts {
		age := now.Sub(p.T)
		var want time.Duration
		switch {
		// Each tier holds its span of closed points and the open one.
		case age <= time.Hour:
			want = 10 * time.Second
		case age <= 24*time.Hour+time.Minute:
			want = time.Minute
		default:
			want = 10 * time.Minute
		}
		if p.Step != want {
			t.Fatalf("point %d at %v (age %v): step %v, want %v", i, p.T, age, p.Step, want)
		}
		// The mean of the samples 0, 10, ..., step-10 seconds into the step.
		start := int64(p.T.Sub(t0) / time.Second)
		if mean := start + (int64(p.Step/time.Second)-10)/2; p.V[0] != mean || p.V[1] != 7 {
			t.Fatalf("point %d at %v step %v: %v, want [%d 7]", i, p.T, p.Step, p.V, mean)
		}
		if i > 0 && !pts[i-1].T.Add(pts[i-1].Step).After(pts[i-1].T) || i > 0 && !p.T.After(pts[i-1].T) {
			t.Fatalf("points %d and %d out of order: %v, %v", i-1, i, pts[i-1].T, p.T)
		}
	}
	// The last hour at 10 s (360 closed points and the open one), the
	// 1-minute points older than that (1,440 closed and the open one,
	// less the 60 the finer tier covers), the 10-minute points older than
	// those: the first day's 144 less the one the 1-minute tier reaches
	// into.
	counts := map[time.Duration]int{}
	for _, p := range pts {
		counts[p.Step]++
	}
	if counts[10*time.Second] != 361 || counts[time.Minute] != 1381 || counts[10*time.Minute] != 144 {
		t.Fatalf("points by step: %v", counts)
	}
	// since leaves out points that ended before it.
	recent := tab.Points(now.Add(-5 * time.Minute))
	if len(recent) != 31 || recent[0].Step != 10*time.Second {
		t.Fatalf("since 5 minutes ago: %d points, first step %v", len(recent), recent[0].Step)
	}
	// A sample older than the newest point changes nothing.
	tab.Add(t0, []int64{-1, -1})
	if got := tab.Points(time.Time{}); len(got) != len(pts) || got[0].V[0] != pts[0].V[0] {
		t.Fatal("an old sample changed the table")
	}
}

// TestYoungTable: while the finest tier still holds every sample, reads
// come from it alone.
func TestYoungTable(t *testing.T) {
	tab := NewTable(1, Tiers(24*time.Hour, 10*time.Second))
	t0 := time.Date(2026, 1, 1, 0, 9, 30, 0, time.UTC)
	for i := range 5 {
		tab.Add(t0.Add(time.Duration(i)*10*time.Second), []int64{int64(i)})
	}
	pts := tab.Points(time.Time{})
	if len(pts) != 5 {
		t.Fatalf("%d points, want 5: %v", len(pts), pts)
	}
	for i, p := range pts {
		if p.Step != 10*time.Second || p.V[0] != int64(i) {
			t.Fatalf("point %d: %+v", i, p)
		}
	}
}
