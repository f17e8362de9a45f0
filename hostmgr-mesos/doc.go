// Package mesos is the host manager plugin for Apache Mesos: it subscribes
// to a Mesos master as a framework through the v1 scheduler HTTP API
// (mesos-go's api/v1/lib: httpcli, recordio, scheduler calls) and turns
// offers into hosts and launches into ACCEPT calls.
//
// Connection. Run subscribes (framework name, one role, capabilities
// MULTI_ROLE, PARTITION_AWARE, REVOCABLE_RESOURCES, failover_timeout) with
// the framework id kept in a FrameworkIDStore, so that a restarted shard
// re-subscribes as the same framework and keeps its tasks. A 307 answer is
// followed to the leading master named in its Location header; several
// master URLs are tried in turn. A stream that carries no event for
// HeartbeatMisses heartbeat intervals is treated as lost: the plugin
// disconnects and re-subscribes with exponential backoff. After every
// SUBSCRIBED it reconciles every run it knows explicitly, and it reconciles
// implicitly every ReconcileInterval.
//
// Hosts. An agent becomes host "<cluster>/<hostname>" (Kind "mesos") when
// its first offer arrives; its attributes become labels. Its capacity is
// what its offers hold plus what this framework's runs hold there,
// recomputed on every offer and remembered between offers, so placement
// can keep choosing it while no offer is held. FAILURE of an agent removes
// the host and reports its runs LOST; an inverse offer (maintenance) marks
// it DRAINING until the inverse offer is rescinded.
//
// Offers and demand. Offers are held for at most OfferHold, then DECLINEd
// with a DeclineRefuse filter; RESCIND drops them. Launch is the demand
// signal: a launch on an agent whose held offers do not have enough
// resources waits up to LaunchWait for one (REVIVE is sent if the
// framework was suppressed or holds no offer there) and is reported LOST
// if none comes, so placement retries elsewhere; no launch is ever
// dropped silently. With no launch waiting, no offer held and no Launch
// for OfferHold, the plugin SUPPRESSes offers until the next Launch.
//
// Launches. The runs of one Launch call bound for one agent go in one
// ACCEPT with one LAUNCH operation, resources carved from the agent's
// offers (keeping their role and allocation info), the task's command
// (shell off, arguments as argv), environment, labels and kill grace. A
// failed ACCEPT reports its runs LOST. A run the plugin reported ended that
// Mesos later reports running is killed, so no run goes on behind the
// shard's back.
//
// Statuses. Every UPDATE is mapped to a hostmgr.TaskStatus (STAGING,
// STARTING and KILLING are not forwarded) and acknowledged when it carries
// a uuid.
//
// The package imports shard/hostmgr, shard/model, shard/clock and
// mesos-go; never another plugin, the job or resource manager, or the
// store (the framework id goes through the small FrameworkIDStore
// interface defined here).
package mesos
