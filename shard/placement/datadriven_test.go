package placement

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata files")

// A testdata file is a sequence of cases. Each case is a command line, its
// input lines, a "----" line and the expected output, ended by a blank line.
// Lines starting with '#' before a command are comments.
//
//	hosts                   defines the hosts and builds a fresh index
//	  <id> cpu= mem= disk= gpu= ports= [cluster=] [unschedulable] [gpuhost] [hostpool=] [inst:<group>=n] <label>=<value>...
//	place [seed=n] [strategy=pack|spread] [naive]
//	  <name> [job=] [count=] cpu= mem= disk= gpu= ports= [gang=] [maxperhost=]
//	         [spread=<key>:<max>]... [group=] [strategy=] [hostpools=a,b] [c=<constraint>]...
//	         [clusters=a,b] [avoid=a,b]
//	free                    prints what is free on each host, in index order
//
// Constraints: k==v, k!=v, k:in:a,b, k:notin:a,b, k:exists, k:notexists;
// '&' joins into AND, '|' into OR (AND binds tighter); several c= are ANDed.
type ddCase struct {
	comments []string
	command  string
	input    []string
	output   string
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cases := readCases(t, file)
			var w ddWorld
			for i := range cases {
				c := &cases[i]
				got := w.run(t, c)
				if *rewrite {
					c.output = got
					continue
				}
				if got != c.output {
					t.Errorf("%s: %s\n--- got\n%s\n--- want\n%s", file, c.command, got, c.output)
				}
			}
			if *rewrite {
				writeCases(t, file, cases)
			}
		})
	}
}

func readCases(t *testing.T, file string) []ddCase {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var cases []ddCase
	var cur ddCase
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if cur.command == "" {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				cur.comments = append(cur.comments, line)
				continue
			}
			cur.command = line
			for i++; i < len(lines) && lines[i] != "----"; i++ {
				cur.input = append(cur.input, lines[i])
			}
			var out []string
			for i++; i < len(lines) && lines[i] != ""; i++ {
				out = append(out, lines[i])
			}
			cur.output = strings.Join(out, "\n")
			cases = append(cases, cur)
			cur = ddCase{}
		}
	}
	return cases
}

func writeCases(t *testing.T, file string, cases []ddCase) {
	var b strings.Builder
	for i, c := range cases {
		for _, l := range c.comments {
			if i > 0 || strings.TrimSpace(l) != "" {
				b.WriteString(l + "\n")
			}
		}
		b.WriteString(c.command + "\n")
		for _, l := range c.input {
			b.WriteString(l + "\n")
		}
		b.WriteString("----\n")
		if c.output != "" {
			b.WriteString(c.output + "\n")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(file, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

type ddWorld struct {
	hosts []Host
	index *HostIndex
}

func (w *ddWorld) run(t *testing.T, c *ddCase) string {
	fields := strings.Fields(c.command)
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		args[k] = v
	}
	switch fields[0] {
	case "hosts":
		w.hosts = nil
		for _, l := range c.input {
			w.hosts = append(w.hosts, parseHost(t, l))
		}
		x, err := NewHostIndex(w.hosts)
		if err != nil {
			return "error: " + err.Error()
		}
		w.index = x
		return "order: " + strings.Join(w.order(), " ")
	case "place":
		tasks, names := parseTasks(t, c.input)
		opts := Options{}
		if s, ok := args["seed"]; ok {
			opts.Seed, _ = strconv.ParseUint(s, 10, 64)
		}
		if s, ok := args["strategy"]; ok {
			opts.Strategy = mustStrategy(t, s)
		}
		var res Result
		if _, ok := args["naive"]; ok {
			res = NaivePlace(w.currentHosts(), tasks)
		} else {
			res = Place(w.index, tasks, opts)
		}
		return renderResult(res, names)
	case "free":
		var out []string
		for _, id := range w.order() {
			h, _ := w.index.Host(model.HostID(id))
			out = append(out, fmt.Sprintf("%s cpu=%s mem=%d disk=%d gpu=%d ports=%d", id,
				model.FormatMilli(h.Free.MilliCPU), h.Free.MemMB, h.Free.DiskMB, h.Free.GPU, h.Ports))
		}
		return strings.Join(out, "\n")
	}
	t.Fatalf("unknown command %q", c.command)
	return ""
}

func (w *ddWorld) order() []string {
	ids := make([]string, w.index.Len())
	for id, slot := range w.index.slotOf {
		ids[slot] = string(id)
	}
	return ids
}

func (w *ddWorld) currentHosts() []Host {
	var hs []Host
	for _, id := range w.order() {
		h, _ := w.index.Host(model.HostID(id))
		hs = append(hs, h)
	}
	return hs
}

func renderResult(res Result, names []string) string {
	lines := map[int]string{}
	hosts := map[model.HostID]bool{}
	for _, a := range res.Assignments {
		lines[a.Ref] = names[a.Ref] + " -> " + string(a.Host)
		hosts[a.Host] = true
	}
	for _, u := range res.Unplaced {
		lines[u.Ref] = names[u.Ref] + " unplaced: " + u.Reason.String()
	}
	var out []string
	for ref := range names {
		if l, ok := lines[ref]; ok {
			out = append(out, l)
		} else {
			out = append(out, names[ref]+" missing from the result")
		}
	}
	out = append(out, fmt.Sprintf("placed %d/%d on %d hosts", len(res.Assignments), len(names), len(hosts)))
	return strings.Join(out, "\n")
}

func mustStrategy(t *testing.T, s string) Strategy {
	st, ok := ParseStrategy(s)
	if !ok {
		t.Fatalf("unknown strategy %q", s)
	}
	return st
}

func parseHost(t *testing.T, line string) Host {
	fields := strings.Fields(line)
	h := Host{ID: model.HostID(fields[0]), Schedulable: true, Labels: map[string]string{}}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch {
		case k == "unschedulable":
			h.Schedulable = false
		case k == "gpuhost":
			h.GPUHost = true
		case k == "hostpool":
			h.HostPool = v
		case k == "ports":
			h.Ports = mustInt(t, v)
		case k == "cluster":
			h.Cluster = v
		case strings.HasPrefix(k, "inst:"):
			if h.Instances == nil {
				h.Instances = map[string]int{}
			}
			h.Instances[strings.TrimPrefix(k, "inst:")] = mustInt(t, v)
		case resourceKind(k) >= 0:
			h.Free = h.Free.Set(resourceKind(k), mustAmount(t, resourceKind(k), v))
		default:
			h.Labels[k] = v
		}
	}
	return h
}

func resourceKind(k string) int {
	return slices.Index(model.ResourceKinds[:], k)
}

func parseTasks(t *testing.T, lines []string) ([]Task, []string) {
	var tasks []Task
	var names []string
	for _, line := range lines {
		fields := strings.Fields(line)
		name := fields[0]
		tk := Task{Job: model.JobID(name)}
		count := 1
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "job":
				tk.Job = model.JobID(v)
			case "count":
				count = mustInt(t, v)
			case "ports":
				tk.Ports = mustInt(t, v)
			case "gang":
				tk.Gang = mustInt(t, v)
			case "maxperhost":
				tk.MaxPerHost = mustInt(t, v)
			case "group":
				tk.SpreadGroup = v
			case "strategy":
				tk.Strategy = mustStrategy(t, v)
			case "spread":
				key, m, _ := strings.Cut(v, ":")
				tk.Spread = append(tk.Spread, SpreadLimit{Key: key, Max: mustInt(t, m)})
			case "hostpools":
				tk.HostPools = strings.Split(v, ",")
			case "c":
				tk.Constraints = append(tk.Constraints, parseConstraint(t, v))
			case "clusters":
				tk.Clusters = strings.Split(v, ",")
			case "avoid":
				tk.AvoidClusters = strings.Split(v, ",")
			default:
				i := resourceKind(k)
				if i < 0 {
					t.Fatalf("unknown task field %q in %q", k, line)
				}
				tk.Resources = tk.Resources.Set(i, mustAmount(t, i, v))
			}
		}
		for i := range count {
			tk.Ref = len(tasks)
			tasks = append(tasks, tk)
			if count == 1 {
				names = append(names, name)
			} else {
				names = append(names, name+"/"+strconv.Itoa(i))
			}
		}
	}
	return tasks, names
}

func parseConstraint(t *testing.T, s string) model.Constraint {
	var anyOf []model.Constraint
	for _, term := range strings.Split(s, "|") {
		var allOf []model.Constraint
		for _, leaf := range strings.Split(term, "&") {
			allOf = append(allOf, parseLeaf(t, leaf))
		}
		if len(allOf) == 1 {
			anyOf = append(anyOf, allOf[0])
		} else {
			anyOf = append(anyOf, model.Constraint{AllOf: allOf})
		}
	}
	if len(anyOf) == 1 {
		return anyOf[0]
	}
	return model.Constraint{AnyOf: anyOf}
}

func parseLeaf(t *testing.T, s string) model.Constraint {
	if k, v, ok := strings.Cut(s, "=="); ok {
		return model.Constraint{Key: k, Op: model.OpEquals, Values: []string{v}}
	}
	if k, v, ok := strings.Cut(s, "!="); ok {
		return model.Constraint{Key: k, Op: model.OpNotEquals, Values: []string{v}}
	}
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 2 {
		t.Fatalf("bad constraint %q", s)
	}
	c := model.Constraint{Key: parts[0]}
	switch parts[1] {
	case "in":
		c.Op = model.OpIn
	case "notin":
		c.Op = model.OpNotIn
	case "exists":
		c.Op = model.OpExists
	case "notexists":
		c.Op = model.OpNotExists
	default:
		t.Fatalf("bad constraint op in %q", s)
	}
	if len(parts) == 3 {
		c.Values = strings.Split(parts[2], ",")
	}
	return c
}

func mustInt(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad integer %q", s)
	}
	return n
}

// mustAmount parses an amount of resource kind k as the scenarios write
// it: cpu in decimal cores, the rest in whole units.
func mustAmount(t *testing.T, k int, s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	if k == 0 {
		return model.CoresToMilli(f)
	}
	return model.WholeUnits(f)
}
