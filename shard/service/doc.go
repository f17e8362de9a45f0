// Package service is the shard's API edge: it implements the v1 gRPC
// services on top of the job manager, converting between protobuf and
// domain types exactly once and choosing gRPC codes for errors. The gateway
// and the federation reach a shard only through these services. Each v1
// service is a type of its own (jobService, taskService, poolService,
// hostService, regionService, eventService, systemService) over what they
// share (api: the engine, the build, the history, the backups, the
// caller, and the helpers); Server composes them and registers them all.
//
// It also keeps the region's pool history (PoolHistory): every pool's
// figures sampled from the engine's read methods (ListPools, Stats) every
// interval into bounded series (internal/timeseries), served by
// GetPoolHistory. The history outlives the engine of one leadership term.
package service
