// Package service is the shard's API edge: it implements the v1 gRPC
// services on top of the job manager, converting between protobuf and
// domain types exactly once and choosing gRPC codes for errors. The gateway
// and the federation reach a shard only through these services.
//
// It also keeps the region's pool history (PoolHistory): every pool's
// figures sampled from the engine's read methods (ListPools, Stats) every
// interval into bounded series (internal/timeseries), served by
// GetPoolHistory. The history outlives the engine of one leadership term.
package service
