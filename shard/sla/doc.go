// Package sla decides whether a disruption of a job's instances may start
// now: a rolling update restarting a batch, a host drain moving instances
// off, a move to another cluster, the preemption of a service instance, an
// operator's task stop. Every caller asks the same question of the same
// function, so two operations never both take the last instances the job
// may lose.
//
// A job's SLA is how many instances may be unavailable at once
// (maxUnavailable, a count or a percentage of the instances). An instance
// is available when it runs and is healthy: its readiness probe says so
// when it has one, else its health check, else running is enough. An
// instance some operation is already disrupting counts as unavailable
// until that operation is done with it. A gang is taken down whole: one
// larger than the limit goes when nothing else of the job is unavailable,
// since it can never go otherwise.
//
// The question is asked of a Job, a value holding the job's instances and
// its limit: a rolling update's step, a migration's step and a drain's
// step take a copy each and ask Disrupt for every gang they would take
// down; preemption asks Room. Available is the one definition of an
// available instance, and the job manager builds every Job with it.
//
// Evaluate, Job and Available are pure functions of their inputs: no
// clock, no I/O, no goroutines. The job manager applies what they allow
// and shows the reason for what they hold back on the job ("waiting for
// SLA: 2/2 unavailable").
//
// It imports only the standard library and shard/model.
package sla
