package reservation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
)

var start = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

func at(sec string) time.Time {
	n, _ := strconv.Atoi(sec)
	return start.Add(time.Duration(n) * time.Second)
}

func taskID(s string) model.TaskID {
	job, inst, _ := strings.Cut(s, "/")
	n, _ := strconv.Atoi(inst)
	return model.TaskID{Job: model.JobID(job), Instance: uint32(n)}
}

func cores(s string) model.Resources {
	n, _ := strconv.Atoi(s)
	return model.Resources{MilliCPU: int64(n) * 1000, MemMB: 1024}
}

// TestPlan runs the cases of testdata/plan.txt.
func TestPlan(t *testing.T) {
	datadriven.RunFile(t, "testdata/plan.txt", func(c datadriven.Case) string {
		return runCase(t, c)
	})
}

func runCase(t *testing.T, c datadriven.Case) string {
	var in Input
	for _, line := range c.Input {
		f := strings.Fields(line)
		switch f[0] {
		case "after":
			in.After = at(f[1]).Sub(start)
		case "perpool":
			in.PerPool, _ = strconv.Atoi(f[1])
		case "now":
			in.Now = at(f[1])
		case "host":
			in.Hosts = append(in.Hosts, Host{ID: model.HostID(f[1]), Capacity: cores(f[2]), Free: cores(f[3]), Open: len(f) < 5})
		case "wait":
			w := Waiter{Task: taskID(f[1]), Pool: f[2], Need: cores(f[3]), Since: at(f[4])}
			if len(f) > 5 {
				only := strings.Split(strings.TrimPrefix(f[5], "only="), ",")
				w.Admits = func(h model.HostID) bool { return slices.Contains(only, string(h)) }
			}
			in.Waiters = append(in.Waiters, w)
		case "held":
			in.Held = append(in.Held, Reservation{Task: taskID(f[1]), Host: model.HostID(f[2]), Pool: f[3], Since: at(f[4])})
		default:
			t.Fatalf("%s: unknown line %q", c.Where, line)
		}
	}
	d := Plan(in)
	var out []string
	show := func(key string, r Reservation) string {
		return fmt.Sprintf("%s %s/%d %s %s %d", key, r.Task.Job, r.Task.Instance, r.Host, r.Pool, int(r.Since.Sub(start)/time.Second))
	}
	for _, r := range d.Held {
		out = append(out, show("held", r))
	}
	for _, r := range d.Made {
		out = append(out, show("made", r))
	}
	for _, r := range d.Released {
		out = append(out, show("released", r.Reservation)+": "+r.Why)
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, "\n")
}
