// Package entitlement computes how much of each resource every pool of a
// shard's pool tree is entitled to: hierarchical max-min fairness weighted by
// share, per resource, top-down from the cluster capacity.
//
// At every parent, per resource, the parent's entitlement is divided among
// its children in two phases:
//
//  1. reservation: each child gets min(demand, reservation). When the parent
//     holds less than these claims add up to, the claims are water-filled in
//     proportion to reservation instead;
//  2. elastic: what is left is water-filled among the children whose demand is
//     not yet met, in proportion to share; no child gets more than its demand,
//     and what one cannot use goes to the others.
//
// A pool's demand is what its leaf reports (queued plus running work) or, for
// a pool with children, the sum of its children's demands; either way it is
// capped by the pool's limit. Entitlement never exceeds demand.
//
// Amounts are whole units (model.Resources: millicores, MiB, devices);
// shares are decimal weights (model.Shares). Every division hands out whole
// units and adds up exactly to what it divides, by one rounding rule, the
// largest remainder (Hamilton) method:
//
//   - the claimants that saturate (reach their cap: demand, reservation
//     claim or limit room) get exactly their cap;
//   - every other claimant's exact part is what the saturated ones leave,
//     times its weight over the sum of their weights; it gets the floor of
//     that part;
//   - the units still left go one at a time to the claimants with the
//     largest fractional remainders, ties to the claimant that comes first
//     (specification order of the children, claim order in Split).
//
// A claimant below its cap has an exact part below that cap, so rounding up
// never breaks a demand or limit cap. The same rule applies to the
// reservation phase, the elastic phase and headroom, at every level, and to
// the federation's global split (which uses Split). For example capacity 100
// shared by three equal claimants each wanting more gives 34/33/33.
//
// With Options.Headroom, capacity that the max-min pass left unclaimed is
// divided the same way by share, capped at each pool's limit, and reported
// separately as Headroom, so admission can use either the demand-capped
// entitlement or the elastic cap (entitlement plus headroom).
//
// The package owns the pool tree's structure and validation (NewTree,
// ValidateSpecs) and the pass itself (Solver, Compute, and Split for a single
// level, as the federation's global pass uses it). Solver.Update runs the
// next pass when only some leaves' demands changed: it sums and divides
// again only on the way from them to the root and where an entitlement
// moved, with exactly Compute's result. It is a pure core: no
// goroutines, clock, I/O or logging, and the same input always gives the same
// output. It imports only shard/model and the standard library; it must not
// import the rest of resmgr, the job manager, placement, storage, host
// managers or the federation.
package entitlement
