package timeseries

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// Clock is what a Set's sampling loop needs of time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Set is the tables of one shape by key (a pool's path, a region's name),
// sampled together every interval and kept for a window. It is safe for
// concurrent use.
type Set struct {
	cols             int
	window, interval time.Duration
	tiers            []Tier

	mu     sync.Mutex
	tables map[string]*Table
}

// NewSet keeps rows of cols values sampled every interval for window.
func NewSet(cols int, window, interval time.Duration) *Set {
	return &Set{cols: cols, window: window, interval: interval, tiers: Tiers(window, interval), tables: map[string]*Table{}}
}

// Window and Interval are how long the set keeps samples and how often
// it takes them.
func (s *Set) Window() time.Duration   { return s.window }
func (s *Set) Interval() time.Duration { return s.interval }

// Record adds one sample of every key, taken at at. A key missing from
// rows loses its history: it is gone (a deleted pool, a region that left).
func (s *Set) Record(at time.Time, rows map[string][]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, row := range rows {
		t := s.tables[key]
		if t == nil {
			t = NewTable(s.cols, s.tiers)
			s.tables[key] = t
		}
		t.Add(at, row)
	}
	for key := range s.tables {
		if _, ok := rows[key]; !ok {
			delete(s.tables, key)
		}
	}
}

// Run records what sample returns now and every interval after, until ctx
// ends; a nil map from sample records nothing that time.
func (s *Set) Run(ctx context.Context, clk Clock, sample func(now time.Time) map[string][]int64) {
	for {
		now := clk.Now()
		if rows := sample(now); rows != nil {
			s.Record(now, rows)
		}
		select {
		case <-ctx.Done():
			return
		case <-clk.After(s.interval):
		}
	}
}

// Points returns a key's points after since (see Table.Points), and false
// for a key the set has no samples of.
func (s *Set) Points(key string, since time.Time) ([]Point, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[key]
	if t == nil {
		return nil, false
	}
	return t.Points(since), true
}

// Keys returns the keys the set has samples of, sorted.
func (s *Set) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.tables))
}

// Bytes is the most memory the set's tables take (Table.Bytes): bounded
// by the window, the columns and the number of keys.
func (s *Set) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.tables {
		n += t.Bytes()
	}
	return n
}
