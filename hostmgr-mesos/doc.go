// Package mesos is the host manager plugin for Apache Mesos: it subscribes
// to a Mesos master as a framework through the v1 scheduler HTTP API
// (mesos-go's api/v1/lib: httpcli, recordio, scheduler calls) and turns
// offers into hosts and launches into ACCEPT calls.
//
// Connection. Run subscribes (framework name, one role, capabilities
// MULTI_ROLE, PARTITION_AWARE, REVOCABLE_RESOURCES, TASK_KILLING_STATE,
// GPU_RESOURCES, failover_timeout) with
// the framework id kept in a FrameworkIDStore, so that a restarted shard
// re-subscribes as the same framework and keeps its tasks. A 307 answer is
// followed to the leading master named in its Location header; several
// master URLs are tried in turn, so a master answering 503 (no leader
// yet) makes the plugin try the next. A stream that carries no event for
// HeartbeatMisses heartbeat intervals is treated as lost: the plugin
// disconnects and re-subscribes with exponential backoff. After every
// SUBSCRIBED it reconciles every run it knows explicitly, and it reconciles
// implicitly every ReconcileInterval.
//
// Hosts. An agent becomes host "<cluster>/<hostname>" (Kind "mesos") when
// its first offer arrives; its attributes become labels. Its capacity is
// what its offers hold plus what this framework's runs hold there,
// recomputed on every offer and remembered between offers, so placement
// can keep choosing it while no offer is held; persistent volumes are not
// counted. Its port ranges are every range its offers ever showed; it runs
// images (the Mesos containerizer runs Docker images). Without
// GPU_RESOURCES the master offers nothing of agents with GPUs. Maintenance
// (maintenance.go: inverse offers, offers with unavailability) makes it
// DRAINING with the window's start as hostmgr.LabelDrainDeadline, which
// the shard drains by; inverse offers are accepted while the start is
// ahead (or nothing runs there) and declined otherwise.
//
// Failed agents (partition.go). FAILURE of an agent makes its host DOWN.
// A run whose agent is unreachable (TASK_UNREACHABLE, or FAILURE) is not
// lost yet: it stays RUNNING in the shard for UnreachableWait (default 5
// minutes, beyond Mesos's own ~75 s to declare an agent unreachable), and
// is reconciled when its agent is offered again and every 30 s; after the
// wait it is reported LOST (HOST_LOST) and the host removed. TASK_GONE,
// TASK_GONE_BY_OPERATOR, TASK_LOST and TASK_UNKNOWN report it LOST at
// once; a failed agent with no live run is removed at once.
//
// Offers and demand. Offers are held for at most OfferHold (keep it below
// the master's --offer_timeout), then DECLINEd with a DeclineRefuse
// filter; RESCIND drops them. A launch whose ACCEPT crossed a RESCIND is
// dropped by the master (TASK_DROPPED, REASON_INVALID_OFFERS) and launched
// again, once, with the agent's next offer, unseen by the shard
// (rescind.go). Launch is the demand
// signal: a launch on an agent whose held offers do not have enough
// resources waits up to LaunchWait for one (REVIVE is sent if the
// framework was suppressed or declined the agent's offers within
// DeclineRefuse, and every LaunchWait/4 while launches wait on agents
// without offers) and is reported LOST if none comes, so placement
// retries elsewhere; no launch is ever dropped silently. With no launch waiting, no offer held and no Launch
// for OfferHold, the plugin SUPPRESSes offers until the next Launch.
//
// Revocable resources (revocable.go): revocable work (Launch.Revocable)
// takes its cpus and mem from the offers' revocable resources, ordinary
// work never; MeasuredUsage (hostmgr.UsageReporter) makes the shard's
// slack on a host equal to its agent's revocable cpus and mem; a
// preempted revocable run (TASK_GONE) is reported LOST.
//
// Launches. Launch queues runs on their agents and returns without
// waiting for the master. A dispatcher (dispatch.go) sends one ACCEPT per
// agent when a call worker is free, carved at that moment from the
// agent's held offers (all of them, in one ACCEPT), so it carries every
// run waiting on the agent that they fit: the runs of many Launch calls
// bound for one agent go out together while earlier ACCEPTs are on the
// wire or the agent's leftover resources are being offered again. Status
// acknowledgements and ACCEPTs take turns on the CallWorkers, and the
// event stream is read without waiting for either. Resources are carved
// keeping their role and allocation info: the scalars, exactly the assigned host ports (a launch
// whose ports the offers lack waits like one short of resources, and is
// reported LOST naming them), and persistent volumes. A volume the offers
// show (reserved disk with its persistence id) is used as it is; one the
// agent does not have is made by RESERVE (disk for the framework's role
// and principal, labelled peloton.volume=<id>) and CREATE (persistence id
// = the volume id, mounted RW in the sandbox under the volume's name)
// before the LAUNCH in the same ACCEPT. A TaskInfo carries the command
// (shell off, arguments as argv) or, in an image without a command, no
// value so that the image's entrypoint runs with the arguments; a
// ContainerInfo of type MESOS with the image as a Docker image (cached
// unless the pull policy is Always) and each volume's sandbox directory
// mounted at its path; the environment (the task's, then the launch's,
// PELOTON_RUN_ID, PELOTON_VOLUME_<NAME> with where each volume is, and
// PELOTON_GANG with the gang as JSON: the command executor cannot be
// handed a file, so Mesos tasks get no gang file);
// labels, kill grace, the health check (HTTP, TCP or COMMAND; the initial
// delay is also the grace period) and the readiness probe as a check
// (CheckInfo), which executors run and report without acting on. A failed
// ACCEPT reports its runs LOST. A run the plugin reported ended that
// Mesos later reports running is killed, so no run goes on behind the
// shard's back.
//
// Kills. The task's kill grace is its TaskInfo's kill policy; Kill's
// grace, when not 0, goes in the KILL's kill policy and overrides it. The
// executor sends SIGTERM (and TASK_KILLING, which is not forwarded: the
// shard knows it asked for the kill) and SIGKILL when the grace period
// ends; the run is reported KILLED when its command has exited.
//
// Statuses. Every UPDATE is mapped to a hostmgr.TaskStatus (STAGING,
// STARTING and KILLING are not forwarded) and acknowledged when it carries
// a uuid. RUNNING statuses carry the health check's verdict (healthy) and
// the check's (check_status: HTTP 2xx/3xx, TCP connected, exit 0),
// UNKNOWN until the first. A run the executor killed for failing its
// health check is reported FAILED with reason UNHEALTHY.
//
// Volumes. RemoveVolumes (hostmgr.VolumeRemover) destroys volumes and
// unreserves their disk (DESTROY + UNRESERVE) with the next offer of
// their agent that holds them, that is once no run uses them.
//
// The package imports shard/hostmgr, shard/model, shard/clock and
// mesos-go; never another plugin, the job or resource manager, or the
// store (the framework id goes through the small FrameworkIDStore
// interface defined here).
package mesos
