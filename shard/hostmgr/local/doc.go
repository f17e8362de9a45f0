// Package local is the host manager plugin that runs tasks as real
// processes on this machine, which it offers as one host
// "<cluster>/<hostname>" sized by its CPUs, memory and the disk space of the
// data directory.
//
// The host runs no images (RunsImages false; a launch with a Container is
// refused) and offers the port ranges of Config.Ports (model.DefaultPorts
// unless configured, `--hosts local,ports=31000-31999|40000-40099`).
//
// Every run gets a directory, <Dir>/runs/<run id>/, and an executor: the
// peloton binary's hidden `executor` role (ExecutorMain), started in its own
// session so it outlives the shard. The executor starts the command in its
// own process group with the task's environment, working directory
// <rundir>/sandbox and output to <rundir>/stdout and <rundir>/stderr, and
// records its life in files written atomically (temp file + rename):
//
//	launch.json   run id, host, command, start time, user (written by the plugin)
//	probes.json   the health check and readiness probe (written by the plugin)
//	executor.pid  the executor's pid and process start time
//	started       executor and command pids, once the command runs
//	health        the probes' verdicts, rewritten when one changes
//	exit          exit code, signal or start error, once it ended
//	kill          present once Kill was asked for (written by the plugin)
//
// A task's environment is exactly, later layers winning: PATH (the
// server's PATH or Config.Path) and HOME=<sandbox>; the spec's Env; the
// shard's Launch.Env (PELOTON_* and PORT_<NAME>); PELOTON_RUN_ID,
// PELOTON_HOST_ID, PELOTON_SANDBOX, PELOTON_VOLUME_<NAME> and
// PELOTON_GANG_FILE; and PWD=<sandbox>. Nothing else of the server's
// environment reaches it. A persistent volume is the directory
// <Dir>/volumes/<volume id>, kept across runs until RemoveVolumes (the
// optional hostmgr.VolumeRemover); a process on the host cannot have it
// mounted at Volume.Path, so its path is in PELOTON_VOLUME_<NAME> (see
// VolumeEnv). A gang's members are written as JSON to
// hostmgr.GangFileName in the sandbox before the command starts.
//
// Probing lives in the executor, so it goes on while the shard restarts:
// command probes run beside the command in its sandbox with its
// environment, http probes GET http://127.0.0.1:<port><path> (2xx and 3xx
// healthy), tcp probes connect; each within its Timeout, every Interval
// after InitialDelay. A probe is UNKNOWN until its first success (HEALTHY)
// or FailureThreshold failures in a row (UNHEALTHY). The plugin reads the
// health file of its runs every PollInterval and reports a change as a
// RUNNING status with Health and Ready.
//
// The plugin waits on the executors it started and learns from a pipe when
// the command runs. After a restart, Reconcile reads the run directories the
// shard asks about: an exit record gives the terminal status, a live executor
// is adopted and polled on the clock, anything else is LOST. Cancelling Run
// never stops a task. Kill sends SIGTERM through the executor and SIGKILL to
// the command's process group after the grace period. ReadLog serves the
// output files (the optional hostmgr.LogReader); a run it never held is an
// error wrapping hostmgr.ErrUnknownRun.
//
// Tasks are sandboxed when this process can switch users (root, or the
// capabilities of switchCaps; Plugin.Sandboxed): each run's command and its
// command probes run as a uid of its own from Config.UIDs (DefaultUIDs,
// gid = uid, no supplementary groups, no_new_privs), unique among the runs
// alive on the host and recorded in launch.json so adopted runs keep it;
// or, with Config.User, all as one user, who then shares its files with
// every task. The executor stays this process's user. The command is
// found on PATH as its user would find it (lookPathAs skips what that user
// cannot search). The directories from Config.TraverseFrom (the data
// directory) down to each run's directory, and volumes/, are 0711, so a
// task reaches its sandbox but can list none of them; the run's files are
// 0600 and this process's, output included (the command writes it through
// inherited descriptors); the sandbox and volumes are 0700 and the run's
// user's, the volumes given to it with all they hold at every launch. When
// a directory above Dir is out of the task users' reach (a data directory
// under /root), runs and volumes live in a stand-in directory of this
// process's user, <temp dir>/peloton-tasks/<hash of Dir>, logged at start
// (a stand-in root some other user made first is refused). When the command ended
// the executor kills what is left of the run's uid (a uid of its own) and
// gives the sandbox back to this process's user. Where a writable cgroup v2
// hierarchy offers the cpu and memory controllers, each run's command
// runs in its own cgroup with cpu.max and memory.max from its resources;
// elsewhere New logs once that task resources are not enforced. Without
// the capabilities tasks run as this process's user.
//
// The package is Linux-first (process groups, /proc for telling a live
// process from a reused pid, credentials, cgroup v2). It imports shard/hostmgr, shard/model and
// shard/clock only; never another plugin, the job or resource manager, or
// the store.
package local
