// Package model holds the shard's domain types: jobs, tasks, resources,
// constraints and hosts, with their state machines. It is shared by every
// shard package and imports nothing of ours; conversion to and from the
// protobuf API happens at the API edge, once.
package model
