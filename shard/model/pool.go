package model

import "time"

// Pool is a node of the resource pool tree, addressed by path ("/",
// "/maps", "/maps/ingest"). Per resource it has a reservation (guaranteed
// when there is demand), a limit (never more) and a share (weight for what
// is left over). Jobs go to leaf pools.
type Pool struct {
	Path        string
	Reservation Resources
	Limit       Resources
	Share       Shares
	CreateTime  time.Time
	// HostPools names the host pools the pool's tasks may be placed on;
	// empty means any (or, below the root, those of the nearest ancestor
	// that names some).
	HostPools []string
	// Clusters steers the placements of the pool's jobs (and of its child
	// pools' jobs) that have no policy of their own.
	Clusters *ClusterPolicy
	// Revision increases on every stored change; stores compare-and-set on it.
	Revision uint64
}
