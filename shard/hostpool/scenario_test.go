package hostpool

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
)

// The scenario files of testdata run one policy period each. A case:
//
//	plan [min-stay=D]     Plan at the scenario's now, hosts staying D
//	                      after a move. Input lines:
//	host ID POOL [cap=R] [used=R] [tasks=N] [held] [to=POOL] [moved=AGO]
//	                      a host in service (held: an operator holds it)
//	                      of capacity R (default 4), R of it allocated
//	                      (default 0) to N tasks (default 1 when used,
//	                      else 0), drained for a move to POOL, moved AGO
//	                      before now (default never)
//	demand POOL R         what waits for a host of POOL
//	floor POOL N          the fewest hosts in service POOL keeps
//
// R is C (C cores and C GiB) or C/M (C cores and M MiB). Output: the
// moves in order with their reasons, or "nothing". Run with -rewrite to
// regenerate the expected output after a deliberate change, then review
// the diff.
func TestPlanScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		return func(c datadriven.Case) string {
			in, err := planInput(c)
			if err != nil {
				t.Fatalf("%s: %v", c.Where, err)
			}
			return formatMoves(Plan(in))
		}
	})
}

var scenarioNow = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

func planInput(c datadriven.Case) (Input, error) {
	in := Input{Now: scenarioNow, Demand: map[string]model.Resources{}, Floors: map[string]int{}}
	f := c.Fields()
	if f[0] != "plan" {
		return in, fmt.Errorf("unknown command %q", f[0])
	}
	for _, o := range f[1:] {
		v, ok := strings.CutPrefix(o, "min-stay=")
		if !ok {
			return in, fmt.Errorf("unknown plan option %q", o)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return in, fmt.Errorf("plan option %q: %w", o, err)
		}
		in.MinStay = d
	}
	for _, line := range c.Input {
		if err := planLine(&in, strings.Fields(line)); err != nil {
			return in, fmt.Errorf("%q: %w", line, err)
		}
	}
	return in, nil
}

// planLine reads one input line into in.
func planLine(in *Input, f []string) error {
	if len(f) < 3 {
		return fmt.Errorf("want host ID POOL ..., demand POOL R or floor POOL N")
	}
	switch f[0] {
	case "host":
		h, err := parseHost(f[1], f[2], f[3:], in.Now)
		if err != nil {
			return err
		}
		in.Hosts = append(in.Hosts, h)
	case "demand":
		r, err := parseAmount(f[2])
		if err != nil || len(f) != 3 {
			return fmt.Errorf("want demand POOL R, R as C or C/M")
		}
		in.Demand[f[1]] = r
	case "floor":
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || len(f) != 3 {
			return fmt.Errorf("want floor POOL N with N >= 0")
		}
		in.Floors[f[1]] = n
	default:
		return fmt.Errorf("unknown line kind %q", f[0])
	}
	return nil
}

func parseHost(id, pool string, opts []string, now time.Time) (Host, error) {
	h := Host{ID: model.HostID(id), Pool: pool, Capacity: coresOf(4000, 4096), InService: true}
	tasks := -1
	for _, o := range opts {
		if o == "held" {
			h.InService = false
			continue
		}
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return h, fmt.Errorf("host option %q: want KEY=VALUE or held", o)
		}
		if err := hostOption(&h, &tasks, k, v, now); err != nil {
			return h, fmt.Errorf("host option %q: %w", o, err)
		}
	}
	switch {
	case tasks >= 0:
		h.Tasks = tasks
	case !h.Allocated.IsZero():
		h.Tasks = 1
	}
	return h, nil
}

func hostOption(h *Host, tasks *int, k, v string, now time.Time) error {
	var err error
	switch k {
	case "cap":
		h.Capacity, err = parseAmount(v)
	case "used":
		h.Allocated, err = parseAmount(v)
	case "tasks":
		*tasks, err = strconv.Atoi(v)
	case "to":
		h.Target = v
	case "moved":
		var ago time.Duration
		ago, err = time.ParseDuration(v)
		h.LastMoved = now.Add(-ago)
	default:
		return fmt.Errorf("unknown key %q", k)
	}
	return err
}

// parseAmount reads C (cores, as many GiB) or C/M (cores, MiB).
func parseAmount(s string) (model.Resources, error) {
	c, m, hasMem := strings.Cut(s, "/")
	cores, err := strconv.ParseFloat(c, 64)
	if err != nil || cores < 0 {
		return model.Resources{}, fmt.Errorf("amount %q: want C or C/M", s)
	}
	milli := model.CoresToMilli(cores)
	if !hasMem {
		return coresOf(milli, milli*1024/1000), nil
	}
	mem, err := strconv.ParseInt(m, 10, 64)
	if err != nil || mem < 0 {
		return model.Resources{}, fmt.Errorf("amount %q: want C/M with M in MiB", s)
	}
	return coresOf(milli, mem), nil
}

func coresOf(milli, memMB int64) model.Resources {
	return model.Resources{MilliCPU: milli, MemMB: memMB}
}

func formatMoves(moves []Move) string {
	if len(moves) == 0 {
		return "nothing"
	}
	lines := make([]string, len(moves))
	for i, m := range moves {
		lines[i] = m.String() + ": " + m.Reason
	}
	return strings.Join(lines, "\n")
}
