package sla

import (
	"fmt"
	"strconv"
	"strings"
)

// Budget is a job's maxUnavailable as written: a count, or a percentage of
// the instances when Percent is set.
type Budget struct {
	Value   uint32
	Percent bool
}

// DefaultServiceBudget is the SLA of a long-running job that sets none.
var DefaultServiceBudget = Budget{Value: 1}

// ParseBudget reads "2" or "25%".
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "%"), 10, 32)
	if err != nil || s == "" {
		return Budget{}, fmt.Errorf("%q is not a count such as 2 or a percentage such as 25%%", s)
	}
	if pct && n > 100 {
		return Budget{}, fmt.Errorf("%q is more than 100%%", s)
	}
	return Budget{Value: uint32(n), Percent: pct}, nil
}

func (b Budget) String() string {
	if b.Percent {
		return strconv.FormatUint(uint64(b.Value), 10) + "%"
	}
	return strconv.FormatUint(uint64(b.Value), 10)
}

// Limit is how many of n instances may be unavailable at once. A
// percentage rounds down but never below one, so that a small job can
// still be updated: 25% of 3 instances is 1.
func (b Budget) Limit(n uint32) uint32 {
	if !b.Percent {
		return b.Value
	}
	l := uint32(uint64(n) * uint64(b.Value) / 100)
	if l == 0 && b.Value > 0 && n > 0 {
		l = 1
	}
	return l
}

// Instance is one instance of a job as the evaluator sees it.
type Instance struct {
	ID uint32
	// Available: it runs and its probes say it may take traffic.
	Available bool
	// Disrupted: an operation already took it down, or is about to; it
	// counts as unavailable whatever its state.
	Disrupted bool
}

// down reports whether the instance counts against the budget.
func (i Instance) down() bool { return !i.Available || i.Disrupted }

// Decision is the evaluator's answer to one request.
type Decision struct {
	// Allowed are the requested instances that may be disrupted now, in
	// the order asked; Held the rest.
	Allowed []uint32
	Held    []uint32
	// Unknown are the held ids the job has no instance of (an instance
	// that ended for good is not one): no room lets them go.
	Unknown []uint32
	// Unavailable is how many instances count as down before the request;
	// Limit is how many may.
	Unavailable uint32
	Limit       uint32
}

// Reason says why instances were held back, "" when none were.
func (d Decision) Reason() string {
	if len(d.Held) == 0 {
		return ""
	}
	if len(d.Unknown) > 0 {
		return fmt.Sprintf("instance %d is not a running instance of the job", d.Unknown[0])
	}
	return fmt.Sprintf("waiting for SLA: %d/%d unavailable", d.Unavailable, d.Limit)
}

// Evaluate decides which of the requested instances may be disrupted now,
// given every instance of the job and its limit of unavailable ones.
// Instances already down cost nothing more and are always allowed; the
// others are allowed in the order asked while the limit leaves room.
// Requested ids the job does not have are held.
func Evaluate(limit uint32, instances []Instance, request []uint32) Decision {
	byID := make(map[uint32]Instance, len(instances))
	var down uint32
	for _, in := range instances {
		byID[in.ID] = in
		if in.down() {
			down++
		}
	}
	d := Decision{Unavailable: down, Limit: limit}
	room := int64(limit) - int64(down)
	seen := make(map[uint32]bool, len(request))
	for _, id := range request {
		if seen[id] {
			continue
		}
		seen[id] = true
		in, ok := byID[id]
		switch {
		case !ok:
			d.Held = append(d.Held, id)
			d.Unknown = append(d.Unknown, id)
		case in.down():
			d.Allowed = append(d.Allowed, id)
		case room > 0:
			room--
			d.Allowed = append(d.Allowed, id)
		default:
			d.Held = append(d.Held, id)
		}
	}
	return d
}
