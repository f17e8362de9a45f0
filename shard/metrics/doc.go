// Package metrics exports a shard's scheduler figures to Prometheus.
//
// It owns the names of the scheduler's metric families
// (peloton_<area>_<what>_<unit>) and turns the job manager's Stats snapshot
// into them on every scrape: a prometheus.Collector that reads, never a
// counter bumped in a hot loop. Labels are the region, pool path, resource,
// cluster, state or reason; never a job or a task.
//
// It imports shard/jobmgr, shard/model and shard/resmgr; nothing of the
// shard imports it (cmd wires it to the registry).
package metrics
