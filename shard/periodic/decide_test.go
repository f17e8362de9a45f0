package periodic

import (
	"fmt"
	"strings"
	"testing"
	"time"

	_ "time/tzdata"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
)

// TestDecide runs the cases of testdata/decide.txt.
func TestDecide(t *testing.T) {
	datadriven.RunFile(t, "testdata/decide.txt", func(c datadriven.Case) string {
		in := Input{Location: time.UTC}
		for _, line := range c.Input {
			key, rest, _ := strings.Cut(line, " ")
			if err := setInput(&in, key, rest); err != nil {
				t.Fatalf("%s: %q: %v", c.Where, line, err)
			}
		}
		if out := describeDecision(Decide(in)); out != "" {
			return out
		}
		return "nothing"
	})
}

func setInput(in *Input, key, rest string) error {
	var err error
	switch key {
	case "cron":
		in.Schedule.Cron = rest
		in.Cron, err = ParseCron(rest)
	case "zone":
		in.Schedule.TimeZone = rest
		in.Location, err = time.LoadLocation(rest)
	case "policy":
		in.Schedule.Concurrency = map[string]model.Concurrency{"allow": model.ConcurrencyAllow,
			"forbid": model.ConcurrencyForbid, "replace": model.ConcurrencyReplace}[rest]
	case "deadline":
		in.Schedule.StartingDeadline, err = time.ParseDuration(rest)
	case "keep":
		_, err = fmt.Sscan(rest, &in.Schedule.KeepRuns)
	case "created":
		in.Created, err = time.Parse(time.RFC3339, rest)
	case "now":
		in.Now, err = time.Parse(time.RFC3339, rest)
	case "stopped":
		in.Stopped = true
	case "last":
		err = parseStatus(&in.Status, rest)
	case "run":
		err = parseRun(in, rest)
	default:
		err = fmt.Errorf("unknown key")
	}
	return err
}

// parseStatus reads "TIME key=n ... [suspended]".
func parseStatus(p *model.PeriodicStatus, text string) error {
	fields := strings.Fields(text)
	var err error
	if p.LastTick, err = time.Parse(time.RFC3339, fields[0]); err != nil {
		return err
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		var n uint64
		if v != "" {
			if _, err := fmt.Sscan(v, &n); err != nil {
				return err
			}
		}
		switch k {
		case "launched":
			p.Launched = n
		case "skipped":
			p.Skipped = n
		case "missed":
			p.Missed = n
		case "suspended":
			p.Suspended = true
		default:
			return fmt.Errorf("unknown status field %q", k)
		}
	}
	return nil
}

// parseRun reads "ID active|done CREATED [TICK]".
func parseRun(in *Input, text string) error {
	f := strings.Fields(text)
	r := Run{ID: model.JobID(f[0]), Active: f[1] == "active"}
	var err error
	if r.Created, err = time.Parse(time.RFC3339, f[2]); err != nil {
		return err
	}
	if len(f) > 3 {
		if r.Tick, err = time.Parse(time.RFC3339, f[3]); err != nil {
			return err
		}
	}
	in.Runs = append(in.Runs, r)
	return nil
}

// describeDecision writes a decision as the testdata has it.
func describeDecision(d Decision) string {
	var out []string
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	if !d.Launch.IsZero() {
		out = append(out, "launch "+at(d.Launch))
	}
	ids := func(key string, xs []model.JobID) {
		if len(xs) > 0 {
			s := make([]string, len(xs))
			for i, x := range xs {
				s[i] = string(x)
			}
			out = append(out, key+" "+strings.Join(s, " "))
		}
	}
	ids("stop", d.Stop)
	ids("delete", d.Delete)
	if d.Record {
		p := d.Status
		line := "status last=" + at(p.LastTick)
		for _, kv := range []struct {
			k string
			n uint64
		}{{"launched", p.Launched}, {"skipped", p.Skipped}, {"missed", p.Missed}} {
			if kv.n > 0 {
				line += fmt.Sprintf(" %s=%d", kv.k, kv.n)
			}
		}
		if p.Suspended {
			line += " suspended"
		}
		out = append(out, line)
	}
	if !d.Next.IsZero() {
		out = append(out, "next "+at(d.Next))
	}
	return strings.Join(out, "\n")
}

// RunID is the same for every attempt at one tick, and differs between
// ticks and between jobs.
func TestRunID(t *testing.T) {
	tick := time.Date(2026, 11, 28, 10, 5, 0, 0, time.UTC)
	a := RunID("job-a", tick)
	if a != RunID("job-a", tick.In(time.FixedZone("x", 3600))) {
		t.Fatal("the same tick in another zone gives another id")
	}
	if a == RunID("job-a", tick.Add(time.Minute)) || a == RunID("job-b", tick) {
		t.Fatal("ids collide")
	}
	if len(a) != 36 || a[14] != '8' {
		t.Fatalf("%s is not a UUID of version 8", a)
	}
}
