package model

import (
	"strings"
	"time"
)

// DefaultHostPool is the host pool of a host no one put in another: the
// shared pool, open to every resource pool that names no host pools or
// names "shared".
const DefaultHostPool = "shared"

// HostPoolOf returns the host pool a label names: the label, or
// DefaultHostPool when it is empty.
func HostPoolOf(label string) string {
	if label == "" {
		return DefaultHostPool
	}
	return label
}

// MaxHostPoolName bounds the length of a host pool's name.
const MaxHostPoolName = 63

// ValidHostPoolName reports whether s can name a host pool: 1 to 63
// lowercase letters, digits and '-', starting with a letter.
func ValidHostPoolName(s string) bool {
	if s == "" || len(s) > MaxHostPoolName || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// HostPoolEvents is the job key under which host pool moves are kept with
// the region's events; it is not a job id (those are UUIDs), so it never
// names a job.
const HostPoolEvents JobID = "hostpools"

// HostPoolMove is a host changing host pools: set by an operator, or
// decided by the host pool policy (which may drain the host first).
type HostPoolMove struct {
	Host HostID
	From string
	To   string
	// Phase is what happened: the policy started draining the host for
	// the move, or the host is now in To.
	Phase HostPoolMovePhase
	// Reason says who or what moved it: "operator", or the policy's
	// figures ("batch: 12 cpu pending; services: 3 idle hosts").
	Reason string
	// Waited is how long the host was drained before it moved (zero for
	// an idle host).
	Waited time.Duration
}

// HostPoolMovePhase is the step of a host pool move an event records.
type HostPoolMovePhase uint8

const (
	// HostPoolMoveDraining: the host is drained so that it can move.
	HostPoolMoveDraining HostPoolMovePhase = iota + 1
	// HostPoolMoveDone: the host is in its new host pool.
	HostPoolMoveDone
	// HostPoolMoveCancelled: the move was called off (the demand that
	// asked for it is gone); the host stays, back in service.
	HostPoolMoveCancelled
)

var hostPoolMovePhaseNames = [...]string{"", "DRAINING", "MOVED", "CANCELLED"}

func (p HostPoolMovePhase) String() string {
	if int(p) < len(hostPoolMovePhaseNames) {
		return hostPoolMovePhaseNames[p]
	}
	return "UNKNOWN"
}
