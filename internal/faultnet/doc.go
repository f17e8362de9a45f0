// Package faultnet is a faulty network in user space, for tests: the
// kernels these tests run on have no netem, and a test must be able to
// make the links between regions lossy, slow, reordering or cut, one
// direction at a time, and change them while it runs.
//
// A Network holds the setting (a Link) of every directed pair of
// regions and knows which region an address belongs to (Register). Two
// wrappers send through it:
//
//   - Transport wraps memberlist's network transport (gossip): a packet
//     is dropped with the link's loss, otherwise delivered after its
//     latency ± jitter, a fraction of them held back so that later ones
//     overtake them; a stream (memberlist's TCP: push-pull, fallback
//     pings) is delayed, stalls while the link is cut and cannot be
//     opened across a cut.
//   - Dialer is a dialer for gRPC (grpc.WithContextDialer) whose
//     connections behave as Transport's streams.
//
// Faults are applied on the side that sends a packet, and for streams on
// the side that opened the connection (both directions: what it writes
// goes through from→to, what it reads through to→from). Addresses not
// registered, and links within one region, are left clean.
//
// Loss on a stream is not a lost byte but a late one: a chunk "lost" is
// delivered after a retransmission timeout (RetransmitTimeout), as TCP
// would. A cut stalls a stream until the link heals or the connection's
// deadline passes; a dial across a cut fails once its timeout passes.
//
// It imports memberlist and the standard library only; nothing in the
// product imports it.
package faultnet
