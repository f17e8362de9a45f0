package model

import (
	"slices"
	"strings"
	"time"
)

// ClusterPolicy steers a job's new placements among the clusters of its
// region: Prefer is tried first, Avoid never. Clusters are named as their
// plugins name them ("dc1"), or with their kind ("mesos:dc1").
type ClusterPolicy struct {
	Prefer []string
	Avoid  []string
}

// ClusterName is the cluster a policy entry names: "mesos:dc1" is "dc1".
func ClusterName(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// ClusterNames are the cluster names of policy entries, in order, each
// once.
func ClusterNames(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if n := ClusterName(s); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// IsZero reports whether the policy says nothing.
func (p *ClusterPolicy) IsZero() bool { return p == nil || (len(p.Prefer) == 0 && len(p.Avoid) == 0) }

// Clone returns a deep copy (nil for nil).
func (p *ClusterPolicy) Clone() *ClusterPolicy {
	if p == nil {
		return nil
	}
	return &ClusterPolicy{Prefer: slices.Clone(p.Prefer), Avoid: slices.Clone(p.Avoid)}
}

// MigrationID names a migration within its region.
type MigrationID string

// MigrationState is where a migration stands.
type MigrationState uint8

const (
	// MigrationMigrating: instances are being moved to the target.
	MigrationMigrating MigrationState = iota + 1
	// MigrationRollingBack: the moved instances are being moved back to
	// the clusters they came from.
	MigrationRollingBack
	// MigrationSucceeded: every selected instance runs on the target.
	MigrationSucceeded
	// MigrationRolledBack: every moved instance is back.
	MigrationRolledBack
	// MigrationAborted: an operator stopped it; instances stay where they
	// are.
	MigrationAborted
	// MigrationFailed: a job it moved ended or was stopped under it.
	MigrationFailed
)

var migrationStateNames = [...]string{"", "MIGRATING", "ROLLING_BACK", "SUCCEEDED", "ROLLED_BACK", "ABORTED", "FAILED"}

func (s MigrationState) String() string {
	if int(s) < len(migrationStateNames) {
		return migrationStateNames[s]
	}
	return "UNKNOWN"
}

// IsTerminal reports whether the migration has ended.
func (s MigrationState) IsTerminal() bool {
	return s == MigrationSucceeded || s == MigrationRolledBack || s == MigrationAborted || s == MigrationFailed
}

// Migration moves the instances of one job, or of every job of a pool,
// from the clusters they run on to one target cluster.
type Migration struct {
	ID MigrationID
	// Job or Pool: what was selected.
	Job  JobID
	Pool string
	// To is the target cluster's name.
	To string
	// BatchSize is how many instances of a job move at once (0: the SLA's
	// limit).
	BatchSize     uint32
	Surge         bool
	MoveRunning   bool
	AllowStateful bool
	Paused        bool
	State         MigrationState
	// Message says why it waits, stopped or ended.
	Message        string
	CreateTime     time.Time
	CompletionTime time.Time
	// PoolClusters is the pool's cluster policy before the migration
	// changed it (pool migrations), restored by abort and rollback.
	PoolClusters *ClusterPolicy
	Jobs         []MigrationJob
	// Revision increases on every stored change; stores compare-and-set on it.
	Revision uint64
}

// MigrationJob is one job of a migration: where it came from, what moved,
// and the report.
type MigrationJob struct {
	Job  JobID
	Type JobType
	// From is the cluster most of its instances ran on at the start.
	From string
	// Clusters is the job's own cluster policy before the migration
	// changed it, restored by abort and rollback.
	Clusters *ClusterPolicy
	// Instances is how many instances were to move.
	Instances uint32
	// Moved lists the instances the migration moved to the target
	// (ascending): a rollback moves these back.
	Moved []uint32
	// Moving lists the instances the migration pinned to the target and
	// has not counted moved yet (ascending).
	Moving []uint32
	// Surge pairs a surge instance (the key) with the instance it stands
	// in for while that one moves.
	Surge map[uint32]uint32
	// Report.
	InFlight          uint32
	MaxUnavailable    uint32
	SLAMaxUnavailable uint32
	Failures          uint32
	Retries           uint32
	Done              bool
	Message           string
}

// IsMoved reports whether the migration moved instance i.
func (j *MigrationJob) IsMoved(i uint32) bool {
	_, ok := slices.BinarySearch(j.Moved, i)
	return ok
}

// AddMoved records instance i as moved.
func (j *MigrationJob) AddMoved(i uint32) bool {
	at, ok := slices.BinarySearch(j.Moved, i)
	if ok {
		return false
	}
	j.Moved = slices.Insert(j.Moved, at, i)
	return true
}

// RemoveMoved forgets instance i (moved back).
func (j *MigrationJob) RemoveMoved(i uint32) {
	if at, ok := slices.BinarySearch(j.Moved, i); ok {
		j.Moved = slices.Delete(j.Moved, at, at+1)
	}
}

// Clone returns a deep copy.
func (m *Migration) Clone() *Migration {
	out := *m
	out.PoolClusters = m.PoolClusters.Clone()
	if m.Jobs != nil {
		out.Jobs = make([]MigrationJob, len(m.Jobs))
		for i := range m.Jobs {
			j := m.Jobs[i]
			j.Clusters = j.Clusters.Clone()
			j.Moved = slices.Clone(j.Moved)
			j.Moving = slices.Clone(j.Moving)
			if j.Surge != nil {
				s := make(map[uint32]uint32, len(j.Surge))
				for k, v := range j.Surge {
					s[k] = v
				}
				j.Surge = s
			}
			out.Jobs[i] = j
		}
	}
	return &out
}
