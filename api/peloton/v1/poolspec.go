package pelotonv1

import (
	"fmt"
	"strings"
)

// DecodePoolSpec decodes a JSON pool spec (convert YAML to JSON first) and
// validates it on its own, reporting every problem with its field path.
// Rules that involve other pools (the parent exists, children's
// reservations fit the parent's) are checked by the server.
func DecodePoolSpec(data []byte) (*PoolSpec, error) {
	spec := &PoolSpec{}
	w, err := decodeMessage(data, spec)
	if err != nil {
		return nil, err
	}
	if err := w.finish(ValidatePoolSpec(spec)); err != nil {
		return nil, err
	}
	return spec, nil
}

// ValidPoolPath reports whether p is an absolute pool path: "/" or
// "/a/b" with non-empty segments of letters, digits, '-', '_' and '.'.
func ValidPoolPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || len(p) > 512 {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for _, r := range seg {
			ok := r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
			if !ok {
				return false
			}
		}
	}
	return true
}

// NormalizePoolPath turns "maps/ingest" or "/maps/ingest/" into
// "/maps/ingest" (paths in URLs come without the leading slash).
func NormalizePoolPath(p string) string {
	return "/" + strings.Trim(p, "/")
}

// ValidatePoolSpec checks one pool spec on its own.
func ValidatePoolSpec(s *PoolSpec) []FieldError {
	var out []FieldError
	add := func(path, msg string) { out = append(out, FieldError{Path: path, Message: msg}) }
	switch {
	case s.GetPath() == "":
		add("path", "is required")
	case !ValidPoolPath(s.GetPath()):
		add("path", fmt.Sprintf("%q is not an absolute pool path like /team/sub (segments of letters, digits, - _ .)", s.GetPath()))
	}
	// Reservations and limits are amounts (cpu to the millicore, the rest
	// whole); shares are weights, any number above zero.
	amount := func(path string, v float64, positive bool, kind amountKind) {
		if msg := amountProblem(v, positive, kind); msg != "" {
			add(path, msg)
		}
	}
	if r := s.GetReservation(); r != nil {
		amount("reservation.cpu", r.Cpu, false, cores)
		amount("reservation.memMb", r.MemMb, false, whole)
		amount("reservation.diskMb", r.DiskMb, false, whole)
		amount("reservation.gpu", r.Gpu, false, whole)
	}
	optional := func(prefix string, a *ResourceAmounts, positive bool, cpuKind, otherKind amountKind) {
		if a == nil {
			return
		}
		if a.Cpu != nil {
			amount(prefix+".cpu", *a.Cpu, positive, cpuKind)
		}
		if a.MemMb != nil {
			amount(prefix+".memMb", *a.MemMb, positive, otherKind)
		}
		if a.DiskMb != nil {
			amount(prefix+".diskMb", *a.DiskMb, positive, otherKind)
		}
		if a.Gpu != nil {
			amount(prefix+".gpu", *a.Gpu, positive, otherKind)
		}
	}
	optional("limit", s.GetLimit(), false, cores, whole)
	optional("share", s.GetShare(), true, weight, weight)
	if r, l := s.GetReservation(), s.GetLimit(); r != nil && l != nil {
		check := func(name string, res float64, lim *float64) {
			if lim != nil && *lim < res {
				add("limit."+name, fmt.Sprintf("must be >= reservation (%g)", res))
			}
		}
		check("cpu", r.Cpu, l.Cpu)
		check("memMb", r.MemMb, l.MemMb)
		check("diskMb", r.DiskMb, l.DiskMb)
		check("gpu", r.Gpu, l.Gpu)
	}
	out = append(out, ClusterPolicyProblems("clusters", s.GetClusters())...)
	SortFieldErrors(out)
	return out
}

// Resolve returns the amounts, with def for every absent one (and for all
// of them when a is nil): an absent limit is unlimited, an absent share 1.
func (a *ResourceAmounts) Resolve(def float64) *Resources {
	pick := func(v *float64) float64 {
		if v == nil {
			return def
		}
		return *v
	}
	if a == nil {
		return &Resources{Cpu: def, MemMb: def, DiskMb: def, Gpu: def}
	}
	return &Resources{Cpu: pick(a.Cpu), MemMb: pick(a.MemMb), DiskMb: pick(a.DiskMb), Gpu: pick(a.Gpu)}
}
