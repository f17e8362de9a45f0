// Package gossip is the federation's membership layer: one member of a
// serf gossip pool (memberlist underneath) per peloton server. It owns
//
//   - starting, joining, leaving and closing a member (Start, Join, Leave,
//     Close) with memberlist's wan/lan/local presets and tunable timeouts;
//   - the member's tags: region, role, API address and shard-leader flag
//     (SetLeader), read back as Members and Regions;
//   - a closed set of events on one channel (MemberUp, MemberDown,
//     MemberLeft, MemberUpdated, MemberReaped, UserEvent), with Coalesce
//     as optional middleware;
//   - the region state exchange: SetState publishes a small blob that
//     CollectStates gathers with the serf query "peloton-state", filtered
//     by the region tag and ordered by a Lamport clock;
//   - gossip encryption and keyring rotation (InstallKey, UseKey,
//     RemoveKey, ListKeys) through serf's KeyManager;
//   - admission (Config.Admission): a member publishes a proof of its
//     identity in TagProof and is added to the others' views only once
//     they verified it (serf's merge delegate; verdicts remembered per
//     claim, refusals retried with a backoff).
//
// Size limits come from serf and memberlist and are checked here before
// anything is sent: tags at most MaxTagBytes (512) encoded, a state blob
// at most MaxStateBytes (640, the reply travels in one UDP packet under
// serf's 1024-byte query reply limit), a user event at most
// MaxUserEventBytes (512). State that does not fit belongs behind the
// member's API address.
//
// Serf reports members as alive, leaving, left or failed; memberlist's
// "suspect" phase is internal to it (it is what SuspicionMult tunes), so
// deciding when a region is suspect versus failed belongs to the layer
// above, which sees MemberDown events and DetectionEstimate. What this
// member's own probes saw is read from memberlist's reports of them
// (probes.go): its ping delegate reports the acked ones (so serf keeps no
// network coordinates, which nothing here uses), its log lines the lost
// and failed ones; Probes counts a member's probes sent, lost and failed
// over a window of up to ProbeWindow, Member.Suspect says one failed
// lately, and HealthScore is memberlist's view of this member's own
// health.
// Config.Transport wraps memberlist's network transport (tests put a
// faulty network there).
//
// It must not import shard/... (shards are reached through their API
// address) nor other federation packages: they import it.
package gossip
