package pelotonv1

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// numberAsString lists the string fields a spec may also give as a whole
// number: `instances: 7` in YAML is a number, and means "7".
var numberAsString = map[protoreflect.FullName]bool{
	"peloton.v1.InstanceOverride.instances": true,
	"peloton.v1.HTTPProbe.port":             true,
	"peloton.v1.TCPProbe.port":              true,
	"peloton.v1.SLA.max_unavailable":        true,
}

// InstanceRange is the instances From..To, both included.
type InstanceRange struct{ From, To uint32 }

// ParseInstanceRanges reads the instances of an override: numbers and
// ranges FROM-TO separated by commas, in increasing order and without
// overlap, such as "0-9,15,20-29". Blanks around items are ignored.
func ParseInstanceRanges(s string) ([]InstanceRange, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf(`is required (instance numbers and ranges, such as "0-9,15")`)
	}
	out := make([]InstanceRange, 0, strings.Count(s, ",")+1)
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		from, to, isRange := strings.Cut(item, "-")
		a, errA := parseInstanceNumber(from)
		b := a
		var errB error
		if isRange {
			b, errB = parseInstanceNumber(to)
		}
		switch {
		case item == "":
			return nil, fmt.Errorf("has an empty item (%q)", s)
		case errA != nil || errB != nil:
			return nil, fmt.Errorf("%q is not an instance number or a range FROM-TO", item)
		case b < a:
			return nil, fmt.Errorf("range %d-%d runs backwards (write %d-%d)", a, b, b, a)
		}
		if n := len(out); n > 0 && a <= out[n-1].To {
			prev := out[n-1]
			return nil, fmt.Errorf("%s comes after %s: list instances in increasing order, each once",
				formatRange(InstanceRange{a, b}), formatRange(prev))
		}
		out = append(out, InstanceRange{a, b})
	}
	return out, nil
}

func parseInstanceNumber(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, strconv.ErrSyntax // no sign, no blank
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err
}

// FormatInstanceRanges writes ranges the way ParseInstanceRanges reads them.
func FormatInstanceRanges(ranges []InstanceRange) string {
	var b strings.Builder
	for i, r := range ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(formatRange(r))
	}
	return b.String()
}

func formatRange(r InstanceRange) string {
	if r.From == r.To {
		return strconv.FormatUint(uint64(r.From), 10)
	}
	return strconv.FormatUint(uint64(r.From), 10) + "-" + strconv.FormatUint(uint64(r.To), 10)
}

// ownedRange is a range of instances and the override that names it.
type ownedRange struct {
	InstanceRange
	override int
}

// overrides checks every instance override: its instances, its task, and
// that no instance is named by two overrides. It sorts the ranges once, so
// a spec with an override per instance is checked in O(n log n).
func (v *specChecker) overrides(s *JobSpec) {
	instances := s.GetInstances()
	sized := instances >= 1 && instances <= MaxInstances
	var all []ownedRange
	for i, o := range s.GetOverrides() {
		path := fmt.Sprintf("overrides[%d]", i)
		if o == nil {
			v.add(path, "must not be empty")
			continue
		}
		ipath := path + ".instances"
		var ranges []InstanceRange
		var err error
		if n := len(o.GetInstances()); n > MaxInstanceRangesBytes {
			err = errors.New(tooLong(n, MaxInstanceRangesBytes))
		} else {
			ranges, err = ParseInstanceRanges(o.GetInstances())
		}
		if err != nil {
			v.add(ipath, err.Error())
		} else if last := ranges[len(ranges)-1].To; sized && last >= instances {
			v.add(ipath, fmt.Sprintf("instance %d is beyond the job's instances (0-%d)", last, instances-1))
		}
		for _, r := range ranges {
			all = append(all, ownedRange{r, i})
		}
		if o.GetTask() == nil {
			v.add(path+".task", "is required")
		} else {
			v.task(path+".task", o.GetTask(), true)
			v.volumesAllowed(path+".task", s.GetType(), o.GetTask())
		}
	}
	v.overlaps(all)
}

// overlaps reports, at the path of each override concerned, the instances
// it shares with other overrides. It sorts the ranges once, so a spec with
// an override per instance is checked in O(n log n).
func (v *specChecker) overlaps(all []ownedRange) {
	if len(all) < 2 {
		return
	}
	slices.SortFunc(all, func(a, b ownedRange) int {
		if c := cmp.Compare(a.From, b.From); c != 0 {
			return c
		}
		return cmp.Compare(a.override, b.override)
	})
	type clash struct {
		other int
		both  InstanceRange
	}
	var clashes map[int][]clash
	// reach is the range reaching furthest among those seen: a range that
	// overlaps any earlier one overlaps it.
	reach := all[0]
	for _, r := range all[1:] {
		if r.From <= reach.To {
			if clashes == nil {
				clashes = map[int][]clash{}
			}
			both := InstanceRange{r.From, min(r.To, reach.To)}
			clashes[r.override] = append(clashes[r.override], clash{reach.override, both})
			clashes[reach.override] = append(clashes[reach.override], clash{r.override, both})
		}
		if r.To > reach.To {
			reach = r
		}
	}
	const shown = 3
	for o, cs := range clashes {
		slices.SortFunc(cs, func(a, b clash) int { return cmp.Compare(a.both.From, b.both.From) })
		parts := make([]string, 0, shown+1)
		for _, c := range cs[:min(len(cs), shown)] {
			parts = append(parts, fmt.Sprintf("%s also named by overrides[%d]", instancesText(c.both), c.other))
		}
		if len(cs) > shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-shown))
		}
		v.add(fmt.Sprintf("overrides[%d].instances", o), strings.Join(parts, "; "))
	}
}

func instancesText(r InstanceRange) string {
	if r.From == r.To {
		return "instance " + formatRange(r)
	}
	return "instances " + formatRange(r)
}
