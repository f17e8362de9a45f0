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
// Failure, relocation and failback follow one rule with hysteresis, so
// that lossy links and a flapping region do not relocate work back and
// forth (docs/reliability.md, "Lossy and flapping links", measures it):
//
//   - A member is failed only when memberlist says so: a probe failed
//     every way (direct, indirect through other members, TCP) and the
//     member did not refute the suspicion within SuspicionMult probe
//     intervals. A lost packet fails no probe on its own.
//   - A region is suspect once none of its members has been reachable for
//     SuspectAfter, failed once for FailAfter (policy.HealthTracker); only
//     failed regions have their jobs relocated, each job once (its replica
//     records the relocation and is never relocated again).
//   - One region relocates a failed region's jobs: the relocator, the
//     first by name after the failed region, wrapping around, of the
//     regions that a region does not hold failed, itself included
//     (relocatorOf): where the owner puts its replicas while all are
//     alive. A region that is not the relocator in its own view relocates
//     nothing, whatever replicas it holds. The relocator first reads the
//     failed region's replicas from every one of those regions and waits
//     while any does not answer; per job it takes the newest copy
//     (newestReplicas): a copy recording a relocation wins (the relocation
//     is recorded here too, not made again), else the owner's latest
//     progress. It records each relocation in every copy it read (its
//     own included). A replica can be held by several regions: the owner
//     puts it in its replica region, the first alive region after it by
//     name, which changes with the owner's view of the others (a flapping
//     link), and a former holder keeps its copy. The rule needs no word to
//     the former holder: what decides is the relocator, not who holds a
//     copy. Regions that see each other agree on the relocator. Two
//     relocators need a region that holds failed every region between the
//     failed one and itself in that order while it sees some region alive
//     (else it is fenced): three regions cannot have that; with more, a
//     partition among the survivors can, and then a relocator adopts the
//     other's relocation only if it reads it before relocating. A deleted
//     job's replica is forgotten by every region not failed (a former
//     holder cut off then keeps it).
//   - A region that sees no other region alive fences itself (launches
//     stop) after SuspectAfter, before the others relocate its work after
//     FailAfter.
//   - A suspect or failed region is alive again only after RecoverAfter
//     of reachability with no gap of SuspectAfter: a region whose links
//     flap with up-times shorter than RecoverAfter stays failed through
//     the flapping, so it is declared failed once and comes back once.
//   - Coming back, the region unfences only after a failback check with
//     every region it sees alive, which stops its own copies of the jobs
//     relocated meanwhile (each once: they end KILLED), and only once
//     each of them answers that it holds this region alive and is not in
//     the middle of relocating its jobs (ListReplicas' owner_health and
//     relocating). Until then the others may relocate any of its jobs, a
//     new one included; their views of a cut differ, and a region holds
//     the returning one failed for RecoverAfter after it sees it again.
//     A relocation pass marks itself before it reads the failed region's
//     health, and the answer reads the health before the mark, so an
//     answer "alive, not relocating" comes before any pass that could
//     still relocate or after it stored its relocations. Unfenced, the
//     region checks again every recheckEvery ticks, and once more when
//     every region is alive again after one was not: a region that kept
//     seeing the others through a cut (memberlist's Lifeguard slows the
//     probes of a member whose own probes fail) learns then that they
//     hold it failed, stops what they relocated and fences itself until
//     they hold it alive (a region that holds it only suspect does not
//     fence it). Moving relocated jobs home again is an operator's
//     FailBack, refused while the region is not alive.
//   - A region starts fenced. One that sees no other region unfences as
//     the only region at once only when it was given no peers to join;
//     given peers, it stays fenced while none has answered, for up to
//     joinWait ticks (30 s), so that a region restarted after its work
//     was relocated does not launch that work again before it hears from
//     the others.
//
// It keeps its own records, the replicas it holds for other regions and
// the drills started here, in the region's store as named values
// (persist.go: ValueReplicas, ValueDrills, with the move of replicas
// written in the layout of earlier versions).
//
// It talks to shards only through the v1 gRPC API, so a shard may be in
// the same process (dev mode) or remote; it never imports shard internals.
// Of shard/ it imports only pure packages (model, clock, the entitlement
// solver) and shard/store's interfaces and sentinel errors, for its
// records; never a store backend, the engine (jobmgr) or the shard's
// service.
package federation
