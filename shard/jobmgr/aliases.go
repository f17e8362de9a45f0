package jobmgr

import "github.com/peloton-federated/peloton/shard/jobmgr/internal/core"

// The job manager's API names what its core defines: errors, the types
// of its answers and settings, and their defaults.
type (
	ClusterUsage      = core.ClusterUsage
	ClusterView       = core.ClusterView
	Event             = core.Event
	HostPoolConfig    = core.HostPoolConfig
	Limits            = core.Limits
	MigrationRequest  = core.MigrationRequest
	PoolShare         = core.PoolShare
	PoolView          = core.PoolView
	ReservationConfig = core.ReservationConfig
)

var (
	ErrClusterDrained    = core.ErrClusterDrained
	ErrInvalid           = core.ErrInvalid
	ErrJobFinished       = core.ErrJobFinished
	ErrMigrationConflict = core.ErrMigrationConflict
	ErrMigrationEnded    = core.ErrMigrationEnded
	ErrNoCapacity        = core.ErrNoCapacity
	ErrNoLogs            = core.ErrNoLogs
	ErrNotFound          = core.ErrNotFound
	ErrNotTerminal       = core.ErrNotTerminal
	ErrSLA               = core.ErrSLA
	ErrUnknownCluster    = core.ErrUnknownCluster
)

const (
	DefaultInstancesPerJob     = core.DefaultInstancesPerJob
	DefaultJobsPerRequest      = core.DefaultJobsPerRequest
	DefaultPendingTasksPerPool = core.DefaultPendingTasksPerPool
	RootPool                   = core.RootPool
)
