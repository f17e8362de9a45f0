// Package auth decides who a caller is and what it may do, before any
// shard code runs.
//
//   - Identity: a bearer token (a token file keeps SHA-256 hashes of
//     high-entropy tokens, reloaded when it changes), a client certificate
//     signed by the region's CA (the name is the subject's common name), or
//     a region's certificate (OU "peloton-region"); a region may assert the
//     identity of the caller it forwards for, nobody else may.
//   - Policy: roles (admin, operator, pool-owner of pool subtrees, viewer)
//     bound to names in a YAML file; Decide is a pure function of the
//     policy, the caller, the action and the resource.
//   - Rules: every RPC of the v1 API maps to an action and a resource;
//     whether an RPC reads or mutates comes from its protobuf descriptor
//     (idempotency_level = NO_SIDE_EFFECTS), so an RPC nobody classified is
//     a mutation.
//   - PKI: a lab CA and certificates (`peloton tls init`), and the TLS
//     configurations of the API port, region-to-region calls and clients.
//
// It imports the v1 API and the standard library; it must not import
// shard/ or federation/.
package auth
