// Package lossy runs three in-process regions (tests/bench/inproc: real
// shards, routers, failover shells and gossip) over a faulty network in
// user space (internal/faultnet): gossip goes through a faulty memberlist
// transport, inter-region gRPC through a faulty dialer. Its tests are the
// scenarios of failover under lossy and slow links: no false failover
// under loss and latency, a real failure still detected fast, a flapping
// region relocated once and failed back once, a one-way partition that
// fails nobody and that `peloton region list` (the real binary, built by
// tests/testkit) shows as probes lost.
//
// Each runs at a short size by default (CI); PELOTON_LOSSY_DURATION sets
// the length of the long runs (`make reliability`), whose figures are
// recorded in docs/reliability.md. BenchmarkDetectionTradeoff measures
// candidate detection settings against each other (not in CI) and can
// write the trade-off chart (docs/detection-tradeoff.svg, drawn by
// internal/svgchart from the table beside it).
//
// It imports internal/faultnet, tests/bench/inproc, tests/testkit and the
// federation's packages; nothing imports it.
package lossy
