// Package placebench measures the placement core: scenarios as data (host
// snapshots and task lists built from a few parameters), and RunScenario,
// which times Place on a scenario and, in the same run, the exhaustive
// best-fit baseline NaivePlace and the sampled baseline SampledPlace (with
// its quality), and reports the rates and their ratios, and the host
// index's build time and memory.
// The `make bench` harness and the Go benchmarks of this package call it.
//
// It owns the timing so the placement core stays free of clocks. It imports
// shard/placement and shard/model only.
package placebench
