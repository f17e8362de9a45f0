package entitlement

import (
	"errors"
	"fmt"
	"github.com/peloton-federated/peloton/internal/datadriven"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// Scenario files are sequences of commands. Each is a command line, input
// lines, a "----" line, then the expected output up to a blank line. Lines
// starting with '#' before a command are comments. Commands:
//
//	tree                       declares the pool tree, one pool a line:
//	/a cpu=R/L/S mem=R/L/S     reservation/limit/share per resource; a
//	                           resource not named is 0/inf/1. Output: "ok"
//	                           or the validation errors, one a line.
//	compute cpu=100 [headroom] runs a pass with that capacity; input lines
//	/a cpu=10 mem=5            give leaf demands. Output: per pool (sorted
//	                           by path) and per resource named in the tree:
//	                           demand, entitlement and, with headroom, headroom.
//	split cpu=100 [headroom]   runs Split on the claims given one a line as
//	a cpu=R/L/S/D              name and reservation/limit/share/demand.
//
// Amounts are whole numbers in the model's units (millicores for cpu, MiB,
// devices) or "inf" for an unlimited limit; shares may be decimal. Run with -rewrite to regenerate the
// expected output after a deliberate change, then review the diff.
func TestScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		sc := &scenario{t: t}
		return func(c datadriven.Case) string {
			sc.where = c.Where
			return sc.run(c.Command, c.Input)
		}
	})
}

type scenario struct {
	t     *testing.T
	where string
	tree  *Tree
	kinds []int // resource kinds named in the tree, in model order
}

func (sc *scenario) run(command string, input []string) string {
	fields := strings.Fields(command)
	switch fields[0] {
	case "tree":
		return sc.declareTree(input)
	case "compute":
		return sc.compute(fields[1:], input)
	case "split":
		return sc.split(fields[1:], input)
	}
	sc.t.Fatalf("%s: unknown command %q", sc.where, fields[0])
	return ""
}

func kindIndex(name string) int { return slices.Index(model.ResourceKinds[:], name) }

// parseShare parses one share (a decimal weight).
func (sc *scenario) parseShare(field, v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		sc.t.Fatalf("%s: %q: %v", sc.where, field, err)
	}
	return f
}

// parseAmount parses one whole amount, "inf" for model.Unlimited.
func (sc *scenario) parseAmount(field, v string) int64 {
	if v == "inf" {
		return model.Unlimited
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		sc.t.Fatalf("%s: %q: amounts are whole units: %v", sc.where, field, err)
	}
	return n
}

// parseFields splits "kind=a/b/c" into the kind's index and its n parts.
func (sc *scenario) parseFields(field string, n int) (int, []string) {
	name, value, ok := strings.Cut(field, "=")
	k := kindIndex(name)
	parts := strings.Split(value, "/")
	if !ok || k < 0 || len(parts) != n {
		sc.t.Fatalf("%s: want kind=%d numbers separated by '/', got %q", sc.where, n, field)
	}
	return k, parts
}

func (sc *scenario) declareTree(input []string) string {
	var specs []PoolSpec
	named := map[int]bool{}
	for _, line := range input {
		fields := strings.Fields(line)
		spec := PoolSpec{Path: fields[0]}
		for k := range kinds {
			spec.Limit = spec.Limit.Set(k, model.Unlimited)
			spec.Share = spec.Share.Set(k, 1)
		}
		for _, f := range fields[1:] {
			k, v := sc.parseFields(f, 3)
			named[k] = true
			spec.Reservation = spec.Reservation.Set(k, sc.parseAmount(f, v[0]))
			spec.Limit = spec.Limit.Set(k, sc.parseAmount(f, v[1]))
			spec.Share = spec.Share.Set(k, sc.parseShare(f, v[2]))
		}
		specs = append(specs, spec)
	}
	sc.kinds = sc.kinds[:0]
	for k := range kinds {
		if named[k] {
			sc.kinds = append(sc.kinds, k)
		}
	}
	tree, err := NewTree(specs)
	sc.tree = tree
	if err == nil {
		return "ok"
	}
	var problems ValidationErrors
	if !errors.As(err, &problems) {
		sc.t.Fatalf("%s: NewTree error is not ValidationErrors: %v", sc.where, err)
	}
	var lines []string
	for _, e := range problems {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// parseAmounts parses "kind=amount" fields and the "headroom" flag.
func (sc *scenario) parseAmounts(fields []string) (model.Resources, bool) {
	var r model.Resources
	headroom := false
	for _, f := range fields {
		if f == "headroom" {
			headroom = true
			continue
		}
		k, v := sc.parseFields(f, 1)
		r = r.Set(k, sc.parseAmount(f, v[0]))
	}
	return r, headroom
}

func formatNumber(v int64) string { return model.FormatUnits(v) }

func (sc *scenario) compute(args, input []string) string {
	if sc.tree == nil {
		sc.t.Fatalf("%s: compute without a valid tree", sc.where)
	}
	capacity, headroom := sc.parseAmounts(args)
	demand := make([]model.Resources, sc.tree.Len())
	for _, line := range input {
		fields := strings.Fields(line)
		i, ok := sc.tree.Index(fields[0])
		if !ok {
			sc.t.Fatalf("%s: demand for unknown pool %q", sc.where, fields[0])
		}
		demand[i], _ = sc.parseAmounts(fields[1:])
	}
	r := Compute(sc.tree, capacity, demand, Options{Headroom: headroom})
	pools := make([]int, sc.tree.Len())
	width := 0
	for i := range pools {
		pools[i] = i
		width = max(width, len(sc.tree.Path(i)))
	}
	slices.SortFunc(pools, func(a, b int) int { return strings.Compare(sc.tree.Path(a), sc.tree.Path(b)) })
	var lines []string
	for _, i := range pools {
		for _, k := range sc.kinds {
			line := fmt.Sprintf("%-*s %s: demand=%s entitlement=%s", width, sc.tree.Path(i), model.ResourceKinds[k],
				formatNumber(r.Demand[i].Get(k)), formatNumber(r.Entitlement[i].Get(k)))
			if headroom {
				line += " headroom=" + formatNumber(r.Headroom[i].Get(k))
			}
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func (sc *scenario) split(args, input []string) string {
	amount, headroom := sc.parseAmounts(args)
	var names []string
	var claims []Claim
	named := map[int]bool{}
	for _, line := range input {
		fields := strings.Fields(line)
		var c Claim
		for _, f := range fields[1:] {
			k, v := sc.parseFields(f, 4)
			named[k] = true
			c.Reservation = c.Reservation.Set(k, sc.parseAmount(f, v[0]))
			c.Limit = c.Limit.Set(k, sc.parseAmount(f, v[1]))
			c.Share = c.Share.Set(k, sc.parseShare(f, v[2]))
			c.Demand = c.Demand.Set(k, sc.parseAmount(f, v[3]))
		}
		names = append(names, fields[0])
		claims = append(claims, c)
	}
	grants := Split(amount, claims, Options{Headroom: headroom})
	var lines []string
	for i, g := range grants {
		for k := range kinds {
			if !named[k] {
				continue
			}
			line := fmt.Sprintf("%s %s: entitlement=%s", names[i], model.ResourceKinds[k], formatNumber(g.Entitlement.Get(k)))
			if headroom {
				line += " headroom=" + formatNumber(g.Headroom.Get(k))
			}
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}
