package policy

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// HealthConfig sets how long a region may go unheard before it is suspect
// or failed, and how long it must be heard again before it is alive.
type HealthConfig struct {
	// SuspectAfter: no member reachable for this long makes a region
	// suspect. Must be above zero.
	SuspectAfter time.Duration
	// FailAfter: no member reachable for this long makes a region failed.
	// Must be at least SuspectAfter.
	FailAfter time.Duration
	// RecoverAfter: a suspect or failed region is alive again once some
	// member has been reachable, without a gap of SuspectAfter or more,
	// for this long. Zero recovers on the first reachable observation.
	RecoverAfter time.Duration
}

// DefaultHealthConfig suits regions linked over a WAN: a few missed probes
// make a region suspect, half a minute of silence fails it, and it must be
// heard for half a minute before it counts again.
func DefaultHealthConfig() HealthConfig {
	return HealthConfig{SuspectAfter: 5 * time.Second, FailAfter: 30 * time.Second, RecoverAfter: 30 * time.Second}
}

// Validate reports thresholds that are not positive or not in order.
func (c HealthConfig) Validate() error {
	switch {
	case c.SuspectAfter <= 0:
		return fmt.Errorf("%w: suspect-after %v must be above zero", ErrBadHealthConfig, c.SuspectAfter)
	case c.FailAfter < c.SuspectAfter:
		return fmt.Errorf("%w: fail-after %v is below suspect-after %v", ErrBadHealthConfig, c.FailAfter, c.SuspectAfter)
	case c.RecoverAfter < 0:
		return fmt.Errorf("%w: recover-after %v must not be negative", ErrBadHealthConfig, c.RecoverAfter)
	}
	return nil
}

// Transition is one change of a region's health, for the shell to log,
// publish and measure detection and failback times with.
type Transition struct {
	Region   string
	From, To Health
	At       time.Time
	// Cause says why, e.g. "no member reachable for 30s", "fenced".
	Cause string
}

func (t Transition) String() string {
	return t.Region + " " + t.From.String() + " -> " + t.To.String() + " (" + t.Cause + ")"
}

// RegionHealth is what the tracker knows of one region.
type RegionHealth struct {
	Region string
	Health Health
	// Fenced regions count as failed until unfenced (drills).
	Fenced bool
	// Reachable and Members are the latest observation.
	Reachable, Members int
	// LastReachable is the latest time some member was reachable (or when
	// the region was first observed, if none ever was).
	LastReachable time.Time
	// Since is when Health last changed.
	Since time.Time
}

// HealthTracker follows each region through alive → suspect → failed and
// back, from observations of how many of its members are reachable. It is a
// pure state machine: time comes in with each call, and every call returns
// the transitions it caused, in region name order. Not safe for concurrent
// use.
//
// A region is alive when first observed, and its silence is counted from
// then. It becomes suspect once no member has been reachable for
// SuspectAfter, failed once for FailAfter (a region found silent for
// FailAfter at once goes through suspect to failed in one call). It is alive
// again only after a run of reachable observations lasting RecoverAfter; a
// gap of SuspectAfter or more between reachable observations starts the run
// over. So a flapping link keeps a region alive or suspect but never fails
// it unless the link stays down for FailAfter, and does not bounce it back
// and forth. A fenced region is failed until unfenced; its recovery run
// starts at the unfencing. A time earlier than one already seen for a region
// is taken as that time.
type HealthTracker struct {
	cfg     HealthConfig
	regions map[string]*regionHealth
}

type regionHealth struct {
	RegionHealth
	// runStart is when the current run of reachable observations began;
	// zero when the latest observation found no member reachable.
	runStart time.Time
	// latest is the latest time given for the region.
	latest time.Time
}

// NewHealthTracker returns a tracker with no regions; the error wraps
// ErrBadHealthConfig.
func NewHealthTracker(cfg HealthConfig) (*HealthTracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &HealthTracker{cfg: cfg, regions: make(map[string]*regionHealth)}, nil
}

// Observe records that reachable of a region's members members could be
// reached at now, and returns the transitions this causes.
func (t *HealthTracker) Observe(region string, reachable, members int, now time.Time) []Transition {
	r := t.region(region, now)
	now = r.advance(now)
	reachable = max(reachable, 0)
	r.Reachable, r.Members = reachable, max(members, reachable)
	if reachable > 0 {
		if r.runStart.IsZero() || now.Sub(r.LastReachable) >= t.cfg.SuspectAfter {
			r.runStart = now
		}
		r.LastReachable = now
	} else {
		r.runStart = time.Time{}
	}
	return t.evaluate(r, now, nil)
}

// Tick re-evaluates every region at now without a new observation: silence
// grows, so regions may become suspect or failed; none recovers on a tick.
func (t *HealthTracker) Tick(now time.Time) []Transition {
	var out []Transition
	for _, name := range slices.Sorted(maps.Keys(t.regions)) {
		r := t.regions[name]
		out = t.evaluate(r, r.advance(now), out)
	}
	return out
}

// Fence makes a region count as failed at once, whatever is observed, until
// Unfence. Fencing a region not yet observed starts tracking it.
func (t *HealthTracker) Fence(region string, now time.Time) []Transition {
	r := t.region(region, now)
	now = r.advance(now)
	r.Fenced = true
	return t.evaluate(r, now, nil)
}

// Unfence lifts a fence. The region stays failed until it has been
// reachable for RecoverAfter from now on.
func (t *HealthTracker) Unfence(region string, now time.Time) []Transition {
	r, ok := t.regions[region]
	if !ok || !r.Fenced {
		return nil
	}
	now = r.advance(now)
	r.Fenced = false
	if !r.runStart.IsZero() {
		r.runStart = now
	}
	return t.evaluate(r, now, nil)
}

// Forget stops tracking a region (it left the federation).
func (t *HealthTracker) Forget(region string) { delete(t.regions, region) }

// Health returns a region's health, and false for a region never observed.
func (t *HealthTracker) Health(region string) (Health, bool) {
	r, ok := t.regions[region]
	if !ok {
		return HealthAlive, false
	}
	return r.Health, true
}

// Status returns what the tracker knows of a region.
func (t *HealthTracker) Status(region string) (RegionHealth, bool) {
	r, ok := t.regions[region]
	if !ok {
		return RegionHealth{}, false
	}
	return r.RegionHealth, true
}

// Regions returns every tracked region's status, by name.
func (t *HealthTracker) Regions() []RegionHealth {
	out := make([]RegionHealth, 0, len(t.regions))
	for _, name := range slices.Sorted(maps.Keys(t.regions)) {
		out = append(out, t.regions[name].RegionHealth)
	}
	return out
}

func (t *HealthTracker) region(name string, now time.Time) *regionHealth {
	r, ok := t.regions[name]
	if !ok {
		r = &regionHealth{RegionHealth: RegionHealth{Region: name, LastReachable: now, Since: now}, latest: now}
		t.regions[name] = r
	}
	return r
}

// Unreachable says that a region's members have been unreachable since
// since, though observed reachable after it: members counted reachable
// while suspect and confirmed failed since. The region's silence counts
// from since. A since not earlier than the region's last reachable time,
// or earlier than the start of its current run of reachable observations,
// changes nothing; nor does it for a region not yet observed.
func (t *HealthTracker) Unreachable(region string, since time.Time) {
	r, ok := t.regions[region]
	if !ok || !since.Before(r.LastReachable) || since.Before(r.runStart) {
		return
	}
	r.LastReachable = since
}

// advance returns now, or the latest time already seen if now is earlier.
func (r *regionHealth) advance(now time.Time) time.Time {
	if now.Before(r.latest) {
		return r.latest
	}
	r.latest = now
	return now
}

// evaluate applies the thresholds at now and appends the transitions.
func (t *HealthTracker) evaluate(r *regionHealth, now time.Time, out []Transition) []Transition {
	move := func(to Health, cause string) {
		out = append(out, Transition{Region: r.Region, From: r.Health, To: to, At: now, Cause: cause})
		r.Health, r.Since = to, now
	}
	if r.Fenced {
		if r.Health != HealthFailed {
			move(HealthFailed, "fenced")
		}
		return out
	}
	silent := now.Sub(r.LastReachable)
	silence := func() string { return "no member reachable for " + silent.String() }
	recovered := !r.runStart.IsZero() && r.LastReachable.Sub(r.runStart) >= t.cfg.RecoverAfter
	switch {
	case silent >= t.cfg.FailAfter:
		if r.Health == HealthAlive {
			move(HealthSuspect, silence())
		}
		if r.Health == HealthSuspect {
			move(HealthFailed, silence())
		}
	case silent >= t.cfg.SuspectAfter:
		if r.Health == HealthAlive {
			move(HealthSuspect, silence())
		}
	case r.Health != HealthAlive && recovered:
		move(HealthAlive, "reachable for "+r.LastReachable.Sub(r.runStart).String())
	}
	return out
}
