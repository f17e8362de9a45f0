// Package periodic decides what a periodic job does at a moment: a pure
// function of its schedule, its recorded state, its runs and the time,
// with no clock, store or goroutine of its own.
//
// A periodic job is a template: it runs no tasks of its own, and at each
// tick of its cron schedule (cron.go: the standard five fields, read in
// the schedule's time zone) it launches a run, a job made from its config
// without the schedule. Decide says, for one job at one moment, which
// tick to launch (at most one: the latest one due), which ticks were
// missed (later than the starting deadline, or passed over for a later
// one), which runs to stop first (concurrency policy Replace) or whether
// to skip the tick (Forbid), and which finished runs to delete beyond the
// ones kept.
//
// A tick's run has an id derived from the job and the tick (RunID), so
// launching a tick is idempotent: whoever launches it again, a leader
// that took over before the first one recorded the tick or a retry, finds
// the run stored and takes it for the tick's run. The job manager's shell
// (shard/jobmgr, periodic.go) records a tick only once its run is stored,
// and the store's lease fences a leader that lost its lease, so each tick
// launches exactly once across leader changes.
package periodic
