// Package core is the state of one region's shard and the decisions that
// change it: jobs and their tasks, the work set, pools and entitlement,
// the queue, the host index, reservations, and the capabilities' per-job
// state (rolling updates, migrations, drains, daemons), with the
// extension points the capabilities are called at (extend.go).
//
// It has no lock, no store, no clock, no context and no goroutine: it
// imports none of them (core_test.go checks it). Its shell, the job
// manager's Engine (package jobmgr), takes its lock around it and hands it
// its inputs: the time (State.Now) and the fencing whenever it takes the
// lock, what plugins reported at the start of a pass. A pass is one step,
// Decide(PassInput), which returns the pass's write set (PassWrite): the
// Engine writes it with no lock held and gives the outcome back (Settle,
// or PutBack when the write failed), then carries out the effects the set
// holds. What the core needs from the store, it asks for (ToRead), and
// the Engine reads it after the pass.
//
// The API's changes are methods of State the Engine calls under its lock
// (Stop, StopInstances, Restart, ...), and the write set of the next pass
// stores them. Scenario files in testdata run the step with no Engine:
// hosts, jobs and plugin reports in, the records written and the launches
// and kills out.
//
// It is internal to the job manager: its fields are the Engine's to read
// and change under the Engine's lock, no one else's. The host cache
// (hostmgr.HostCache) it reads is the one input not yet handed in as data.
package core
