// Package harness runs the scale benchmarks that `make bench` prints: it
// loads scenarios written as data (YAML: cluster size, host shapes and
// labels, the job mix with resources, constraints, priorities and limits,
// the arrival pattern), builds the hosts and jobs they describe, and
// measures, in one run of each scenario:
//
//   - the placement core alone (placement.Place, through
//     placebench.RunScenario for single-pass scenarios, or a round loop with
//     releases for churn), decisions and placements per second, against two
//     baselines on the same snapshot: the exhaustive best-fit scan
//     placement.NaivePlace, and the sampled scan production schedulers use,
//     placement.SampledPlace, with the quality of its placements; and the
//     host index's build time and memory;
//   - the shard end to end: a real jobmgr.Engine in-process on the embedded
//     store (boltstore in a temporary directory) and the sim host manager,
//     timing every task from job submission to its first persisted
//     placement, against the raw store write rate for the same number of
//     task writes (the ceiling for one write per placement);
//   - memory held per pending task, from the heap in use and the resident
//     set before and after N tasks that cannot be placed are pending;
//   - for scenarios with an api section, a real `peloton dev` process
//     (devserver.go) driven through its public API: batch creates over
//     gRPC until every task is seen running, or single creates over
//     HTTP/JSON from many clients (api.go, api_single.go), against a
//     baseline measured in the same run;
//   - small jobs (smalljobs.go): single-task jobs over HTTP against a real
//     `peloton server` on the embedded store and on Cassandra nodes (given,
//     or started for the run with deploy/cassandra/cassandra.sh and
//     measured over JMX: CPU, conditional and plain writes), each against
//     the embedded run and against its store's own ceiling for the same
//     records, written through the store package (smallceiling.go).
//
// Figures come back as Result values; Table and JSON render them.
//
// It imports the shard's packages (placement, placebench, jobmgr, the
// boltstore and cassandra backends, hostmgr and its sim plugin, model,
// store), the API's generated package and tests/testkit, and nothing of
// the gateway, federation or command packages (it runs the binary); the
// product never imports it.
package harness
