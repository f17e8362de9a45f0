// Package rollout is the rolling-update capability: it moves a job's
// instances onto a new config version a batch at a time, under the job's
// SLA, and rolls them back when too many fail.
//
// It owns:
//
//   - the step (Step): given how every gang of the job stands (Gang), which
//     gangs take the target config without a restart, which restart now,
//     which removed gangs stop, and how far the update is (Plan);
//   - the per-job state (Job), kept beside the job by the job manager: the
//     update's record and the books a step is described from (the gangs
//     it restarted, since when they are available, the failure counts
//     they had), with the decisions that live on them: what failures on
//     the target make of the update (CountFailures), a rollback, the end
//     of the update and its progress report.
//
// The job manager is the shell: it describes the job's gangs to Step,
// restarts and stops what the plan says, and writes the update's record
// with the pass when Job.Dirty says so.
//
// Everything here is a pure function of its arguments: time comes in as
// now, the SLA as an sla.Job, no clock reads, goroutines, logging or I/O.
// Step has table tests, and the scenario files in testdata drive Step and
// Job together over several passes.
//
// It imports shard/model and shard/sla only; it must not import the job
// manager, the store, hostmgr or shard/clock.
package rollout
