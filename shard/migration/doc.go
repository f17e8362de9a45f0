// Package migration is the capability that moves jobs' instances from the
// clusters they run on to one target cluster (Mesos to Kubernetes, one
// Kubernetes cluster to another), a batch at a time, under each job's SLA,
// with or without surge instances, and back again on a rollback.
//
// It owns:
//
//   - the step (Step): given how every gang of a job stands (Gang: where
//     its members hold hosts, GangPlace, gathered by Where; what the
//     migration did to it, GangMove; its surge instance), the gang's phase
//     (Phase) and from it which gangs are pinned to the target, get a
//     surge instance, restart there now, lose their surge instance, and
//     how far the job is (Plan);
//   - a job's part in a running migration (Job), kept beside the job by
//     the job manager: the migration's record of the job and the books a
//     step is described from (the gangs it took down, failure counts on
//     the target, how long a moving gang waited for a host), with the
//     record's upkeep (Report, Arrived, Watch) and the migration's end
//     (Summarize).
//
// The job manager is the shell: it plans and starts migrations, describes
// the gangs, pins, restarts and stops what the plan says, and writes the
// records. docs/migration.md tells the whole story.
//
// Everything here is a pure function of its arguments: time comes in as
// now, the SLA as an sla.Job; no clock reads, goroutines, logging or I/O.
//
// It imports shard/model and shard/sla only; it must not import the job
// manager, the store, hostmgr or shard/clock.
package migration
