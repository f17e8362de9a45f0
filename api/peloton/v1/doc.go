// Package pelotonv1 is the one public API of Peloton, federated: the
// protobuf messages and services generated from types.proto and
// service.proto, the HTTP/JSON routes (http.yaml) and OpenAPI document, and
// the hand-written job spec decoding and validation shared by the CLI, the
// gateway and the shard. It imports nothing of ours.
package pelotonv1
