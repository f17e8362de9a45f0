package hostpool

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

var t0 = time.Unix(1_700_000_000, 0).UTC()

func cpu(cores int64) model.Resources {
	return model.Resources{MilliCPU: cores * 1000, MemMB: cores * 1024}
}

// host is a host of 4 cores, 4 GiB in service in pool, running tasks
// that hold used cores.
func host(id, pool string, tasks int, used int64) Host {
	return Host{ID: model.HostID(id), Pool: pool, Capacity: cpu(4), Allocated: cpu(used), Tasks: tasks, InService: true}
}

func TestPlan(t *testing.T) {
	moving := func(h Host, to string) Host { h.Target = to; return h }
	held := func(h Host) Host { h.InService = false; return h }
	movedAt := func(h Host, at time.Time) Host { h.LastMoved = at; return h }
	cases := []struct {
		name   string
		hosts  []Host
		demand map[string]model.Resources
		floors map[string]int
		want   []string
	}{
		{
			name:  "no demand, no moves",
			hosts: []Host{host("b1", "batch", 0, 0), host("s1", "services", 0, 0)},
			want:  nil,
		},
		{
			name:   "idle service hosts move to batch until its demand is covered",
			hosts:  []Host{host("b1", "batch", 2, 4), host("s1", "services", 0, 0), host("s2", "services", 0, 0), host("s3", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(6)},
			want:   []string{"move s1 services->batch", "move s2 services->batch"},
		},
		{
			name:   "never below the floor",
			hosts:  []Host{host("b1", "batch", 2, 4), host("s1", "services", 0, 0), host("s2", "services", 0, 0), host("s3", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(100)},
			floors: map[string]int{"services": 2},
			want:   []string{"move s1 services->batch"},
		},
		{
			name:   "idle hosts before busy ones; a busy one is drained when the rest of its pool has room",
			hosts:  []Host{host("s1", "services", 1, 1), host("s2", "services", 0, 0), host("s3", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(8)},
			floors: map[string]int{"services": 1},
			want:   []string{"move s2 services->batch", "move s3 services->batch"},
		},
		{
			// s2 stays: once s3 and s1 are gone, nothing is left to run its tasks.
			name:   "a busy host is drained when no idle one is left, while the rest of its pool has room",
			hosts:  []Host{host("s1", "services", 1, 1), host("s2", "services", 1, 2), host("s3", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(12)},
			want:   []string{"move s3 services->batch", "drain s1 services->batch"},
		},
		{
			name:   "a busy host whose runs would not fit on the rest of its pool stays",
			hosts:  []Host{host("s1", "services", 3, 3), host("s2", "services", 3, 3)},
			demand: map[string]model.Resources{"batch": cpu(4)},
			want:   nil,
		},
		{
			name:   "a host pool with demand gives nothing",
			hosts:  []Host{host("b1", "batch", 0, 0), host("s1", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(4), "services": cpu(4)},
			want:   nil,
		},
		{
			name:   "hosts held by an operator neither move nor count toward the floor",
			hosts:  []Host{held(host("s1", "services", 0, 0)), host("s2", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(4)},
			floors: map[string]int{"services": 1},
			want:   nil,
		},
		{
			name:   "a host that just moved stays for MinStay",
			hosts:  []Host{movedAt(host("s1", "services", 0, 0), t0.Add(-time.Second)), movedAt(host("s2", "services", 0, 0), t0.Add(-time.Minute))},
			demand: map[string]model.Resources{"batch": cpu(8)},
			want:   []string{"move s2 services->batch"},
		},
		{
			name:   "moves in flight count toward the demand; an empty one finishes",
			hosts:  []Host{moving(host("s1", "services", 1, 1), "batch"), moving(host("s2", "services", 0, 0), "batch"), host("s3", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(8)},
			want:   []string{"finish s2 services->batch"},
		},
		{
			name:   "a move whose target has no demand any more is cancelled",
			hosts:  []Host{moving(host("s1", "services", 1, 1), "batch"), moving(host("s2", "services", 0, 0), "batch")},
			demand: map[string]model.Resources{},
			want:   []string{"cancel s1 services->batch", "finish s2 services->batch"},
		},
		{
			name: "two host pools with demand take turns by name; the pool furthest above its floor gives first",
			hosts: []Host{host("h1", "shared", 0, 0), host("h2", "shared", 0, 0), host("h3", "shared", 0, 0),
				host("s1", "services", 0, 0), host("s2", "services", 0, 0)},
			demand: map[string]model.Resources{"batch": cpu(4), "ml": cpu(4)},
			floors: map[string]int{"services": 1},
			want:   []string{"move h1 shared->batch", "move h2 shared->ml"},
		},
		{
			name:   "hosts go back to services when batch is idle and services wait",
			hosts:  []Host{host("b1", "batch", 0, 0), host("b2", "batch", 0, 0), host("b3", "batch", 2, 4)},
			demand: map[string]model.Resources{"services": cpu(3)},
			floors: map[string]int{"batch": 1},
			want:   []string{"move b1 batch->services"},
		},
		{
			name:   "hosts without the resource asked for are not moved",
			hosts:  []Host{{ID: "g0", Pool: "shared", Capacity: cpu(4), InService: true}, {ID: "g1", Pool: "shared", Capacity: model.Resources{MilliCPU: 4000, MemMB: 4096, GPU: 2}, InService: true}},
			demand: map[string]model.Resources{"ml": {GPU: 1}},
			want:   []string{"move g1 shared->ml"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			moves := Plan(Input{Hosts: c.hosts, Demand: c.demand, Floors: c.floors, MinStay: 10 * time.Second, Now: t0})
			var got []string
			for _, m := range moves {
				got = append(got, m.String())
				if m.Reason == "" {
					t.Errorf("%s has no reason", m)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("moves:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// Plan is a function of its input: shuffled hosts give the same moves.
func TestPlanIgnoresHostOrder(t *testing.T) {
	hosts := []Host{host("s3", "services", 0, 0), host("s1", "services", 1, 1), host("s2", "services", 0, 0), host("b1", "batch", 1, 4)}
	in := Input{Hosts: hosts, Demand: map[string]model.Resources{"batch": cpu(12)}, Now: t0}
	first := Plan(in)
	slices.Reverse(in.Hosts)
	if again := Plan(in); !slices.Equal(first, again) {
		t.Fatalf("order changed the moves: %v vs %v", first, again)
	}
}

func TestPlanReasonNamesFigures(t *testing.T) {
	moves := Plan(Input{Hosts: []Host{host("s1", "services", 0, 0), host("s2", "services", 0, 0)},
		Demand: map[string]model.Resources{"batch": cpu(2)}, Floors: map[string]int{"services": 1}, Now: t0})
	if len(moves) != 1 || !strings.Contains(moves[0].Reason, "batch: ") || !strings.Contains(moves[0].Reason, "floor 1") {
		t.Fatalf("moves %+v", moves)
	}
}

func TestParseFloors(t *testing.T) {
	got, err := ParseFloors("batch=2, services=0")
	if err != nil || got["batch"] != 2 || got["services"] != 0 || len(got) != 2 {
		t.Fatalf("ParseFloors: %v, %v", got, err)
	}
	if got, err := ParseFloors(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"batch", "batch=-1", "batch=x", "Batch=1", "batch=1,batch=2", "=3"} {
		if _, err := ParseFloors(bad); err == nil {
			t.Errorf("ParseFloors(%q) accepted", bad)
		}
	}
}
