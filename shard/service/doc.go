// Package service is the shard's API edge: it implements the v1 gRPC
// services on top of the job manager, converting between protobuf and
// domain types exactly once and choosing gRPC codes for errors. The gateway
// and the federation reach a shard only through these services.
package service
