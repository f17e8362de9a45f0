package policy

import (
	"math/rand/v2"
	"testing"
	"time"
)

// healthHistory is what the test fed the tracker for one region.
type healthHistory struct {
	obs      []healthObs
	fenced   bool
	unfenced time.Time // latest unfencing
	first    time.Time
}

type healthObs struct {
	at        time.Time
	reachable bool
}

// start notes when the tracker starts tracking the region.
func (h *healthHistory) start(now time.Time) {
	if h.first.IsZero() {
		h.first = now
	}
}

// lastReachable is the latest reachable observation, or the first time the
// region was seen.
func (h *healthHistory) lastReachable() time.Time {
	for i := len(h.obs) - 1; i >= 0; i-- {
		if h.obs[i].reachable {
			return h.obs[i].at
		}
	}
	return h.first
}

// recoveredAt reports whether the observations end, at now, with a run of
// reachable ones with no gap of suspectAfter or more that lasts at least
// recoverAfter, counted from the latest unfencing if that came later than
// the run's start.
func (h *healthHistory) recoveredAt(now time.Time, cfg HealthConfig) bool {
	i := len(h.obs) - 1
	if i < 0 || !h.obs[i].reachable || !h.obs[i].at.Equal(now) {
		return false
	}
	for i > 0 && h.obs[i-1].reachable && h.obs[i].at.Sub(h.obs[i-1].at) < cfg.SuspectAfter {
		i--
	}
	start := h.obs[i].at
	if start.Before(h.unfenced) {
		start = h.unfenced
	}
	return now.Sub(start) >= cfg.RecoverAfter
}

// TestHealthTrackerAgainstHistory feeds random observations (steady links,
// flapping links, outages, fences) and checks every transition against the
// history: suspect and failed only after that much silence (or a fence),
// alive only after a long enough unbroken run of reachability, transitions
// chained, and a region silent for FailAfter always failed.
func TestHealthTrackerAgainstHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cfg := HealthConfig{SuspectAfter: 10 * time.Second, FailAfter: 30 * time.Second, RecoverAfter: 20 * time.Second}
	for run := range 300 {
		tracker, err := NewHealthTracker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"A", "B"}
		hist := map[string]*healthHistory{}
		state := map[string]Health{}
		now := epoch
		downChance := map[string]float64{"A": rng.Float64(), "B": rng.Float64()}
		for step := range 400 {
			now = now.Add(time.Duration(1+rng.IntN(6)) * time.Second)
			if step%50 == 0 {
				downChance["A"], downChance["B"] = rng.Float64(), rng.Float64()
			}
			name := names[rng.IntN(len(names))]
			h := hist[name]
			if h == nil {
				h = &healthHistory{}
				hist[name] = h
			}
			var ts []Transition
			evaluated := map[string]bool{name: true} // regions the call re-evaluated
			switch x := rng.IntN(100); {
			case x < 2:
				h.start(now)
				ts = tracker.Fence(name, now)
				h.fenced = true
			case x < 5:
				ts = tracker.Unfence(name, now)
				evaluated[name] = h.fenced
				if h.fenced {
					h.unfenced, h.fenced = now, false
				}
			case x < 10:
				ts = tracker.Tick(now)
				for n := range hist {
					evaluated[n] = true
				}
			default:
				reachable := rng.Float64() >= downChance[name]
				r := 0
				if reachable {
					r = 1 + rng.IntN(3)
				}
				h.start(now)
				h.obs = append(h.obs, healthObs{at: now, reachable: reachable})
				ts = tracker.Observe(name, r, 3, now)
			}
			for _, tr := range ts {
				th := hist[tr.Region]
				if tr.From != state[tr.Region] || tr.From == tr.To || !tr.At.Equal(now) {
					t.Fatalf("run %d: transition %v at %v does not follow state %v", run, tr, tr.At, state[tr.Region])
				}
				state[tr.Region] = tr.To
				silent := now.Sub(th.lastReachable())
				switch {
				case tr.To == HealthFailed && tr.Cause == "fenced":
					if !th.fenced {
						t.Fatalf("run %d: %v while not fenced", run, tr)
					}
				case th.fenced:
					t.Fatalf("run %d: %v while fenced", run, tr)
				case tr.To == HealthFailed && silent < cfg.FailAfter, tr.To == HealthSuspect && silent < cfg.SuspectAfter:
					t.Fatalf("run %d: %v after %v of silence", run, tr, silent)
				case tr.To == HealthAlive && !th.recoveredAt(now, cfg):
					t.Fatalf("run %d: %v without a long enough run of reachability", run, tr)
				}
			}
			for n, th := range hist {
				got, tracked := tracker.Health(n)
				if tracked != !th.first.IsZero() {
					t.Fatalf("run %d: %s tracked=%v, history says %v", run, n, tracked, !th.first.IsZero())
				}
				if got != state[n] {
					t.Fatalf("run %d: %s health %v, transitions say %v", run, n, got, state[n])
				}
				if evaluated[n] && tracked && (th.fenced || now.Sub(th.lastReachable()) >= cfg.FailAfter) && got != HealthFailed {
					t.Fatalf("run %d: %s is %v though fenced=%v and silent for %v", run, n, got, th.fenced, now.Sub(th.lastReachable()))
				}
			}
		}
	}
}
