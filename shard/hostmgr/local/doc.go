// Package local is the host manager plugin that runs tasks as real
// processes on this machine, which it offers as one host
// "<cluster>/<hostname>" sized by its CPUs, memory and the disk space of the
// data directory.
//
// Every run gets a directory, <Dir>/runs/<run id>/, and an executor: the
// peloton binary's hidden `executor` role (ExecutorMain), started in its own
// session so it outlives the shard. The executor starts the command in its
// own process group with the task's environment, working directory
// <rundir>/sandbox and output to <rundir>/stdout and <rundir>/stderr, and
// records its life in files written atomically (temp file + rename):
//
//	launch.json   run id, host, command, start time (written by the plugin)
//	executor.pid  the executor's pid and process start time
//	started       executor and command pids, once the command runs
//	exit          exit code, signal or start error, once it ended
//	kill          present once Kill was asked for (written by the plugin)
//
// The plugin waits on the executors it started and learns from a pipe when
// the command runs. After a restart, Reconcile reads the run directories the
// shard asks about: an exit record gives the terminal status, a live executor
// is adopted and polled on the clock, anything else is LOST. Cancelling Run
// never stops a task. Kill sends SIGTERM through the executor and SIGKILL to
// the command's process group after the grace period. ReadLog serves the
// output files (the optional hostmgr.LogReader).
//
// The package is Linux-first (process groups, /proc for telling a live
// process from a reused pid). It imports shard/hostmgr, shard/model and
// shard/clock only; never another plugin, the job or resource manager, or
// the store.
package local
