package entitlement

import (
	"errors"
	"strings"
)

// Sentinel errors for pool specifications. Every problem found is reported
// as a *FieldError that wraps one of these.
var (
	// ErrInvalidPool is wrapped by every sentinel below.
	ErrInvalidPool = errors.New("invalid pool")
	// ErrBadPath: the path is empty, relative, or has empty segments.
	ErrBadPath = wrapSentinel("bad pool path")
	// ErrDuplicatePool: two specifications share a path.
	ErrDuplicatePool = wrapSentinel("duplicate pool")
	// ErrMissingParent: a pool's parent path is not among the specifications.
	ErrMissingParent = wrapSentinel("missing parent pool")
	// ErrBadAmount: a reservation or limit is negative or not a number, or a
	// reservation is infinite.
	ErrBadAmount = wrapSentinel("bad amount")
	// ErrBadShare: a share is not a finite number above zero.
	ErrBadShare = wrapSentinel("bad share")
	// ErrLimitBelowReservation: a limit is lower than the reservation.
	ErrLimitBelowReservation = wrapSentinel("limit below reservation")
	// ErrChildReservationsExceedParent: the reservations of a pool's
	// children add up to more than the pool's own reservation.
	ErrChildReservationsExceedParent = wrapSentinel("children's reservations exceed parent's")
)

type sentinel struct{ msg string }

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return ErrInvalidPool }

func wrapSentinel(msg string) error { return &sentinel{msg: msg} }

// FieldError is one problem with one field of one pool specification.
type FieldError struct {
	Path   string // the pool's path, as given
	Field  string // e.g. "path", "parent", "cpu.reservation", "mem.share"
	Err    error  // one of the sentinels above
	Detail string // what is wrong, in words, with the values involved
}

func (e *FieldError) Error() string {
	return e.Path + ": " + e.Field + ": " + e.Detail
}

func (e *FieldError) Unwrap() error { return e.Err }

// ValidationErrors is every problem found in a set of pool specifications, in
// the order of the specifications. errors.Is works on each wrapped sentinel.
type ValidationErrors []*FieldError

func (v ValidationErrors) Error() string {
	var b strings.Builder
	for i, e := range v {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the individual field errors.
func (v ValidationErrors) Unwrap() []error {
	out := make([]error, len(v))
	for i, e := range v {
		out[i] = e
	}
	return out
}
