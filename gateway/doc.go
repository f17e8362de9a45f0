// Package gateway is the front door of a region: one listener that serves
// the v1 gRPC API and, on the same port, the HTTP/JSON API (grpc-gateway),
// the OpenAPI document, health and Prometheus metrics. It holds no
// scheduling logic: services are registered by the caller (a shard's API,
// or the federation's router in front of several shards).
package gateway
