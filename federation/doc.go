// Package federation ties regions into one control plane. The Router
// implements the public v1 API in front of a region's shard: calls for the
// local region are served by the shard, calls for another region are
// forwarded to that region's gateway over gRPC, calls that span regions fan
// out and merge. Forwarding is generic (forward.go): the request's job,
// update, host or region field, read through the protobuf descriptors,
// picks the region, and the call is passed on by method name; only the
// calls that do more than forward are written out. Membership and health
// come from gossip (federation/gossip); routing, the global entitlement split, health and relocation decisions
// are pure functions (federation/policy).
//
// It talks to shards only through the v1 gRPC API, so a shard may be in
// the same process (dev mode) or remote; it never imports shard internals.
package federation
