package core

import (
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// HostPoolConfig tunes the host pool policy, which moves hosts between
// host pools as demand shifts (package hostpool decides; this file
// applies).
type HostPoolConfig struct {
	// Period is how often the policy looks at demand and moves hosts; 0
	// means DefaultHostPoolPeriod, a negative period turns the policy off
	// (hosts then change host pools only when an operator moves them).
	Period time.Duration
	// Floors is the fewest hosts in service each host pool keeps.
	Floors map[string]int
	// DrainDeadline is how long batch runs on a host drained for a move
	// may go on before they are killed to run elsewhere; 0 means
	// DefaultHostPoolDrainDeadline.
	DrainDeadline time.Duration
}

// ResourceHostPools returns the host pools the tasks of a resource pool
// may use: those of the pool, or of its nearest ancestor that names some;
// nil means any.
func (e *State) ResourceHostPools(path string) []string {
	for p, ok := path, true; ok; p, ok = entitlement.ParentPath(p) {
		if pool := e.Pools.ByPath[p]; pool != nil && len(pool.HostPools) > 0 {
			return pool.HostPools
		}
	}
	return nil
}

// HostPoolOf returns the host pool a host is in.
func (e *State) HostPoolOf(id model.HostID) string {
	if r := e.HostRecs[id]; r != nil {
		return r.Pool()
	}
	return model.DefaultHostPool
}
