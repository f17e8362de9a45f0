// Command curves writes the cost curves that `make bench-curves` commits
// into docs/curves: for each curve a CSV of the figures and an SVG chart on
// log-log axes (drawn by internal/svgchart, no plotting tool needed), and a README
// stating each series' growth from a least-squares fit of its slope.
//
// The curves: placement decisions per second against hosts (the core, the
// full scan and the sampled scan, through placebench); bytes per pending
// task against tasks (harness.RunMemory, as make bench measures memory);
// end-to-end placements per second against concurrent submitting clients
// (harness.RunEndToEnd on an in-process shard); the time the federation
// takes to relocate a failed region's jobs against relocated tasks
// (federation.Failover in process over real stores); and entitlement pass
// time against pools (entitlement.Solver and policy.SplitPools).
//
// Flags: -out DIR, -quick (small points, seconds: what the package's test
// runs), -only NAME[,NAME...], -scenarios DIR. Progress goes to stderr, the
// growth statements to stdout.
//
// It is a benchmark tool: it imports the shard, federation and bench
// harness packages; nothing imports it.
package main
