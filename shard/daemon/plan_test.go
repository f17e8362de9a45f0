package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
)

// Each case of testdata/plan.txt:
//
//	plan [label=KEY=VALUE ...]     the job's constraints (label equals value)
//	host ID [down] [KEY=VALUE ...] a host, up unless down, with its labels
//	instance N HOST                a live instance pinned to HOST
//
// Output: "stop N" and "start HOST" lines in order, or "nothing".
func TestPlanScenarios(t *testing.T) {
	datadriven.RunFile(t, "testdata/plan.txt", func(c datadriven.Case) string {
		out, err := runPlan(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Where, err)
		}
		return out
	})
}

func runPlan(c datadriven.Case) (string, error) {
	f := c.Fields()
	if f[0] != "plan" {
		return "", fmt.Errorf("unknown command %q", f[0])
	}
	var cons []model.Constraint
	for _, a := range f[1:] {
		kv, ok := strings.CutPrefix(a, "label=")
		k, v, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 {
			return "", fmt.Errorf("option %q: want label=KEY=VALUE", a)
		}
		cons = append(cons, model.Constraint{Key: k, Op: model.OpEquals, Values: []string{v}})
	}
	var hosts []Host
	var live []Instance
	for _, line := range c.Input {
		w := strings.Fields(line)
		switch {
		case len(w) >= 2 && w[0] == "host":
			h := Host{ID: model.HostID(w[1]), Up: true, Labels: map[string]string{}}
			for _, o := range w[2:] {
				if o == "down" {
					h.Up = false
					continue
				}
				k, v, ok := strings.Cut(o, "=")
				if !ok {
					return "", fmt.Errorf("host option %q", o)
				}
				h.Labels[k] = v
			}
			hosts = append(hosts, h)
		case len(w) == 3 && w[0] == "instance":
			n, err := strconv.ParseUint(w[1], 10, 32)
			if err != nil {
				return "", err
			}
			live = append(live, Instance{Instance: uint32(n), Host: model.HostID(w[2])})
		default:
			return "", fmt.Errorf("unknown line %q", line)
		}
	}
	d := Plan(hosts, cons, live)
	var out []string
	for _, n := range d.Stop {
		out = append(out, fmt.Sprintf("stop %d", n))
	}
	for _, h := range d.Start {
		out = append(out, "start "+string(h))
	}
	if len(out) == 0 {
		return "nothing", nil
	}
	return strings.Join(out, "\n"), nil
}

// Plan leaves what it is given alone.
func TestPlanLeavesItsInputAlone(t *testing.T) {
	hosts := []Host{{ID: "a", Up: true}, {ID: "b", Up: true}}
	live := []Instance{{0, "a"}, {1, "a"}}
	d := Plan(hosts, nil, live)
	if fmt.Sprint(d) != "{[1] [b]}" {
		t.Fatalf("decision %v", d)
	}
	if live[0] != (Instance{0, "a"}) || live[1] != (Instance{1, "a"}) || hosts[1].ID != "b" {
		t.Fatalf("input changed: %v %v", hosts, live)
	}
}
