// Package mesostest is an in-process emulator of an Apache Mesos master's v1
// scheduler HTTP API, written from the Mesos documentation
// (docs/scheduler-http-api.md, reconciliation.md,
// high-availability-framework-guide.md), for tests and benchmarks of the
// Mesos host manager on machines where no Mesos master can be installed.
//
// It serves POST /api/v1/scheduler in protobuf and JSON. SUBSCRIBE answers
// 200 with a Mesos-Stream-Id header and a RecordIO stream of events
// (SUBSCRIBED with heartbeat_interval_seconds, HEARTBEAT, OFFERS, RESCIND,
// INVERSE_OFFERS, RESCIND_INVERSE_OFFER, UPDATE, FAILURE, ERROR). Other calls
// need the framework's current stream id and answer 202; a body that does
// not parse or a call missing its fields answers 400 with a message, a call
// of a framework that is not subscribed 403. A master that is not the
// leader (SetRedirect) answers every call 307 Temporary Redirect with a
// Location header naming the leader ("//host:port/api/v1/scheduler"), and
// one that knows no leader (SetNoLeader, an election) 503 Service
// Unavailable, as docs/scheduler-http-api.md ("Master detection") and
// endpoints/master/api/v1/scheduler.md say; either closes the
// subscriptions it served, as a master that loses leadership exits.
//
// Simulated agents hold resources (revocable ones too: offered, marked
// revocable, to REVOCABLE_RESOURCES frameworks only; SetRevocable shrinks
// them and preempts tasks on them, TASK_GONE or TASK_LOST with
// REASON_CONTAINER_PREEMPTED; revocable.go), port ranges (by
// default [31000-32000]) and attributes. Offers go out in batches of what
// agents have free, also while earlier offers of an agent are
// outstanding; an agent with GPUs is offered only to frameworks with the
// GPU_RESOURCES capability (the master's default --filter_gpu_resources).
// With Config.OfferTimeout (the master's --offer_timeout; zero, the
// default, never) offers outstanding longer are rescinded (RESCIND) and
// offered again. RescindOffers rescinds an agent's offers at once, as an
// operator's reservation does. An ACCEPT against an unknown, rescinded
// or already used offer reports its tasks TASK_DROPPED (partition-aware
// frameworks) or TASK_LOST; an invalid task TASK_ERROR, among them one
// whose resources (ports included) the offers do not hold.
//
// ACCEPT applies its operations in order (docs/reservation.md,
// docs/persistent-volume.md): RESERVE of scalars for the framework's role
// (never "*") with its principal and labels, UNRESERVE, CREATE of
// persistent volumes on reserved disk (persistence id unique per role on
// the agent, relative container path, mode RW), DESTROY of volumes no task
// uses, LAUNCH and LAUNCH_GROUP. Reserved resources and volumes survive
// their tasks and are offered back only to frameworks of their role, in
// the pre-refinement format (Resource.role and Resource.reservation). An
// invalid operation is dropped as the master drops it: with an operation
// id the framework gets UPDATE_OPERATION_STATUS OPERATION_ERROR, without
// one nothing, and a later LAUNCH that counted on it fails TASK_ERROR. A
// finished operation with an id gets OPERATION_FINISHED with a uuid (sent
// once, not retried).
//
// A launched task sends TASK_STARTING and TASK_RUNNING, runs for the
// duration in its PELOTON_SIM_DURATION environment variable and ends
// TASK_FINISHED, or TASK_FAILED when PELOTON_SIM_EXIT_CODE is not 0. Its
// ContainerInfo must be of type MESOS (the agents run the Mesos
// containerizer). Its health check and check run as the command executor
// runs them (see probes); their results come from test switches
// (SetAgentHealthy, SetTaskHealthy, SetTaskReady) or the task's
// PELOTON_SIM_HEALTHY / PELOTON_SIM_READY, healthy by default.
// KILL follows the command executor (src/launcher/executor.cpp): SIGTERM,
// TASK_KILLING to frameworks with the TASK_KILLING_STATE capability, and
// TASK_KILLED when the command exits (after its PELOTON_SIM_STOP_DELAY,
// by default at once) or, at the latest, when the grace period ends (the
// KILL's kill policy, else the TaskInfo's, else 3 seconds); a later KILL
// with a kill policy can shorten it; a task not yet running ends
// TASK_KILLED at the next tick.
//
// Agent-generated updates carry a uuid and are resent until acknowledged;
// master-generated ones (reconciliation, invalid launches, removed agents) do
// not. Agents can fail (partition.go): PartitionAgent makes one
// unreachable (FAILURE, offers rescinded, its tasks TASK_UNREACHABLE to
// PARTITION_AWARE frameworks and TASK_LOST to others; they run on, their
// updates held until ReconnectAgent, after which reconciliation, not an
// update, tells that they run); RemoveAgent and MarkAgentGone remove one
// for good (TASK_GONE or TASK_GONE_BY_OPERATOR, TASK_LOST to others).
// Maintenance (maintenance.go, docs/maintenance.md): StartMaintenance
// rescinds the agent's offers, offers it again with its unavailability
// and sends inverse offers to the frameworks running tasks there;
// ACCEPT_INVERSE_OFFERS and DECLINE_INVERSE_OFFERS are recorded
// (InverseOfferAnswers) and filter new inverse offers for refuse_seconds;
// StopMaintenance rescinds inverse offers and offers. A
// framework that re-subscribes with its id within failover_timeout keeps its
// tasks; after it, the tasks are killed and the id is refused.
//
// What it does not follow, knowingly: agents fail only when a test says so
// (no ping timeouts, no --agent_removal_rate_limit, unreachable agents
// are never garbage collected into TASK_UNKNOWN); a KILL of a task on an
// unreachable agent is dropped, as the agent never hears of it; there is
// no machine DOWN mode (RemoveAgent stands for it); one role per
// framework, no hierarchical roles, refined reservations or shared
// resources; no subscribe.force (a new SUBSCRIBE always replaces the
// old); SUPPRESS and REVIVE ignore their roles; SHUTDOWN, MESSAGE and
// REQUEST are accepted and do nothing, RECONCILE_OPERATIONS and the
// calls of later Mesos versions are refused (400); custom
// executors get no executor API; DOCKER containers are refused (the
// agents run the Mesos containerizer); a master's state is its own, so a
// failover between two emulators is a framework re-subscribing with its id
// to a master that never saw it; revocable slack changes only through
// SetRevocable, with no QoS controller or resource estimator.
//
// Time advances in ticks of one loop goroutine (Run); tasks are kept in a
// deadline heap, so the emulator holds 10,000+ agents and 100,000+ tasks
// without a goroutine per agent or task.
//
// It imports mesos-go's v1 protobuf types and shard/clock only.
package mesostest
