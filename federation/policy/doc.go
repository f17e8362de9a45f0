// Package policy holds the federation's decision cores: what each region
// gets of every federated pool, which region a job goes to, how healthy
// each region is, and where a failed region's jobs go.
//
//   - SplitPools is the global entitlement pass: each pool's global
//     reservation and limit split among the regions that are not failed and
//     whose state is fresh, with the local pass's max-min code
//     (entitlement.Split) one level up, regions as the children.
//   - ChooseRegion routes a job: its pinned region, or the alive region that
//     can satisfy its constraints with the most entitlement left in its
//     pool, then the most free capacity, then the first by name; with
//     reasons for the API and --explain.
//   - HealthTracker is the alive → suspect → failed state machine fed with
//     reachability observations, with recovery hysteresis and fencing for
//     drills; it returns its transitions as data.
//   - PlanRelocation places a failed region's relocatable jobs in the
//     surviving regions within capacity and global quotas; PlanAll answers
//     the same for every region at once (failover readiness).
//
// Every function is a pure core: no goroutines, no clock reads (time comes
// in as arguments), no I/O, no logging. The same inputs give the same
// outputs whatever their order; ties are broken by region name (or job ID).
// The shell (gossip, RPC, tickers, the store) gathers RegionState from the
// regions, calls these functions and applies their results.
//
// It imports shard/model and shard/resmgr/entitlement, and the standard
// library; it must not import the rest of the shard (job manager, resource
// manager, placement, storage, host managers), the API, gossip or the rest
// of the federation.
package policy
