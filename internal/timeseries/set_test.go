package timeseries

import (
	"testing"
	"time"
)

// A key missing from a sample loses its history and its memory.
func TestSetForgetsKeys(t *testing.T) {
	s := NewSet(2, time.Hour, 10*time.Second)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Record(t0, map[string][]int64{"/a": {1, 2}, "/b": {3, 4}})
	both := s.Bytes()
	s.Record(t0.Add(10*time.Second), map[string][]int64{"/a": {5, 6}})
	if keys := s.Keys(); len(keys) != 1 || keys[0] != "/a" || s.Bytes() != both/2 {
		t.Fatalf("keys %v, %d bytes (%d with both)", keys, s.Bytes(), both)
	}
	if _, ok := s.Points("/b", time.Time{}); ok {
		t.Fatal("/b still has points")
	}
	pts, ok := s.Points("/a", time.Time{})
	if !ok || len(pts) != 2 || pts[1].V[1] != 6 {
		t.Fatalf("/a: %v", pts)
	}
}
