// Package auth decides who a caller is and what it may do, before any
// shard code runs.
//
//   - Identity: a bearer token (a token file keeps SHA-256 hashes of
//     high-entropy tokens, reloaded when it changes), a client certificate
//     signed by the region's CA (the name is the subject's common name), or
//     a region's certificate (OU "peloton-region"), or an OIDC ID token of
//     a configured issuer (oidc.go, verified with go-oidc); a region may
//     assert the identity of the caller it forwards for, nobody else may.
//   - Policy: roles (admin, operator, pool-owner of pool subtrees, viewer)
//     bound to names in a YAML file or in a policy set through the API
//     (Policies: file or store as the source; CheckNewPolicy refuses
//     lockouts); Decide is a pure function of the policy, the caller, the
//     action and the resource.
//   - Rules: every RPC of the v1 API maps to an action and a resource;
//     whether an RPC reads or mutates comes from its protobuf descriptor
//     (idempotency_level = NO_SIDE_EFFECTS), so an RPC nobody classified is
//     a mutation.
//   - PKI: a lab CA and certificates (`peloton tls init`), and the TLS
//     configurations of the API port, region-to-region calls and clients.
//
// It imports the v1 API, the standard library, sigs.k8s.io/yaml and
// go-oidc; it must not import shard/ or federation/. oidctest is a test
// issuer (discovery, keys, signed ID tokens) for tests only.
package auth
