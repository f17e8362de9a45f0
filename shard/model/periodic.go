package model

import "time"

// Concurrency says what a periodic job does at a tick while an earlier run
// of it is still going.
type Concurrency uint8

const (
	// ConcurrencyAllow launches the tick's run beside the ones going.
	ConcurrencyAllow Concurrency = iota + 1
	// ConcurrencyForbid skips the tick.
	ConcurrencyForbid
	// ConcurrencyReplace stops the runs going and launches the tick's.
	ConcurrencyReplace
)

var concurrencyNames = [...]string{"", "ALLOW", "FORBID", "REPLACE"}

func (c Concurrency) String() string {
	if int(c) < len(concurrencyNames) {
		return concurrencyNames[c]
	}
	return "UNKNOWN"
}

// Schedule makes a job periodic: it runs no tasks of its own, and at each
// tick of Cron it launches a run, a job of its own made from the job's
// config without the schedule.
type Schedule struct {
	// Cron is a standard five-field cron expression (or a macro such as
	// @hourly), read in TimeZone.
	Cron string
	// TimeZone is an IANA time zone name; empty means UTC.
	TimeZone string
	// Concurrency is what a tick does while a run is going; zero means
	// ConcurrencyAllow.
	Concurrency Concurrency
	// StartingDeadline is how late a tick may still be launched (after a
	// leader change or while the region was down); a tick missed by more
	// is counted as missed. Zero: only the latest missed tick is launched.
	StartingDeadline time.Duration
	// KeepRuns is how many finished runs are kept; older ones are
	// deleted. Zero means the default, 3.
	KeepRuns uint32
}

// DefaultKeepRuns is how many finished runs a periodic job keeps when its
// schedule does not say.
const DefaultKeepRuns = 3

// Keep returns how many finished runs are kept.
func (s *Schedule) Keep() int {
	if s.KeepRuns == 0 {
		return DefaultKeepRuns
	}
	return int(s.KeepRuns)
}

// PeriodicStatus is what a periodic job records of its schedule.
type PeriodicStatus struct {
	// Suspended: no tick launches a run until resumed.
	Suspended bool
	// LastTick is the latest tick handled: launched, skipped or missed.
	LastTick time.Time
	// LastRun is the latest run launched, by a tick or by hand.
	LastRun JobID
	// Launched, Skipped and Missed count the ticks that launched a run,
	// that were skipped because a run was going (ConcurrencyForbid), and
	// that passed their starting deadline unlaunched.
	Launched, Skipped, Missed uint64
}

// RunOf links a run to the periodic job that launched it.
type RunOf struct {
	Parent JobID
	// Tick is the time of the tick that launched it; zero for a run
	// launched by hand.
	Tick time.Time
}
