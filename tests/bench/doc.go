// Command bench is the scale benchmark harness that `make bench` runs
// (`go run ./tests/bench`). It loads the scenarios in scenarios/*.yaml
// (embedded in the binary), runs each at its "full" size, and prints one
// table: placement-core decisions per second against the exhaustive
// best-fit scan and the sampled scan production schedulers use (with its
// placement quality), the host index's build time and memory, committed
// placements per second end to end through an
// in-process shard (job manager, embedded store, sim host manager) against
// the raw store write rate, submit-to-placed p50/p99, and bytes per pending
// task. Scenarios with an api section (api-batch, api-single) instead
// drive a real `peloton dev` process, started from the binary, through its
// public API (gRPC CreateJobs, HTTP/JSON CreateJob) and print a second
// table: jobs per second against a baseline measured in the same run.
//
// Flags: -list, -scenario NAME[,NAME...], -size full|small, -json,
// -parts core,e2e,memory,api, -cpuprofile FILE, -memprofile FILE,
// -budget-scale F, -bin FILE, -server-cpuprofile-dir DIR. With
// -small-jobs N it runs the small-jobs sitting instead
// (-small-jobs-stores, -small-jobs-clients, -small-jobs-hosts,
// -small-jobs-profile-dir, -cassandra-script; `make bench-cassandra`). The same
// scenarios run at their "small" size as the package's go test tests, and
// as Go benchmarks (go test -bench).
//
// It imports tests/bench/harness, tests/testkit (to build the binary) and
// the standard library; nothing imports it.
package main
