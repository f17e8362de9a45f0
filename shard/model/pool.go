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
	// Clusters steers the placements of the pool's jobs (and of its child
	// pools' jobs) that have no policy of their own.
	Clusters *ClusterPolicy
	// Revision increases on every stored change; stores compare-and-set on it.
	Revision uint64
}
