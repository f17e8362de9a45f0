// Package gateway is the front door of a region: one listener that serves
// the v1 gRPC API and, on the same port, the HTTP/JSON API (grpc-gateway),
// the OpenAPI document, health and Prometheus metrics, over TLS when
// configured. It holds no scheduling logic: services are registered by the
// caller (a shard's API, or the federation's router in front of several
// shards).
//
// Before any registered service runs, every call is authenticated,
// authorised by its rule and, when it mutates, audited (secure.go, with
// the decisions in gateway/auth). The HTTP/JSON side reaches the gRPC
// services over an in-process connection (bridge.go). AuthService and
// AuditService are served by the gateway itself.
//
// It must not import shard/: the audit log and a job's pool come in
// through Config.
package gateway
