package gossip

import "errors"

// Sentinel errors; callers test them with errors.Is.
var (
	// ErrInvalidConfig: a Config field is missing or out of range.
	ErrInvalidConfig = errors.New("gossip: invalid config")
	// ErrStart: serf could not start, e.g. the bind address is taken.
	ErrStart = errors.New("gossip: start failed")
	// ErrJoin: none of the given members could be reached (or all refused
	// us, e.g. because our key does not match theirs).
	ErrJoin = errors.New("gossip: join failed")
	// ErrClosed: the membership was closed or has left.
	ErrClosed = errors.New("gossip: membership closed")
	// ErrStateTooLarge: a state blob exceeds MaxStateBytes.
	ErrStateTooLarge = errors.New("gossip: state blob too large")
	// ErrPayloadTooLarge: a user event exceeds MaxUserEventBytes.
	ErrPayloadTooLarge = errors.New("gossip: user event too large")
	// ErrKeyring: a keyring operation failed on at least one member, or
	// gossip is not encrypted.
	ErrKeyring = errors.New("gossip: keyring operation failed")
	// ErrBadKey: a key is not 16, 24 or 32 bytes.
	ErrBadKey = errors.New("gossip: key must be 16, 24 or 32 bytes")
	// ErrQuery: serf refused to send a query.
	ErrQuery = errors.New("gossip: query failed")
)
