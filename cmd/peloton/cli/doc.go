// Package cli is the `peloton` command-line client: cobra commands that load
// and check job specs locally, then talk gRPC to a Peloton gateway (jobs,
// their updates, configs and history, tasks and their logs, pools, hosts and
// their drains, regions, version) and print the answers as tables, JSON or
// YAML.
//
// NewRootCommand builds the client commands; cmd/peloton adds the server
// roles to the same root and runs it with Main, which prints errors and turns
// them into the exit codes documented on ExitOK and its siblings.
//
// The package talks to servers only through the generated API clients of
// api/peloton/v1. It must not import shard/* internals (other than
// shard/clock), gateway or federation: a client must work against any
// gateway, in-process or remote.
package cli
