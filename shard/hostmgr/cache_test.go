package hostmgr

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// TestFractionalCoresReturnToZero places and ends thousands of runs of
// 0.1, 0.3 and 0.7 cores (amounts no binary float holds exactly) on a few
// hosts, ending them in a shuffled order, and checks that every host and
// the cluster total come back to exactly zero: integer millicores do not
// drift the way summed float cores did.
func TestFractionalCoresReturnToZero(t *testing.T) {
	c := NewHostCache()
	var hosts []model.Host
	for i := range 4 {
		hosts = append(hosts, model.Host{
			ID:       model.HostID("c/h" + strconv.Itoa(i)),
			State:    model.HostUp,
			Capacity: model.ResourcesFromDecimal(64, 262144, 1e6, 0),
		})
	}
	c.Update(hosts)

	type run struct {
		host      model.HostID
		r         model.Resources
		revocable bool
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cores := []float64{0.1, 0.3, 0.7}
	var runs []run
	var want model.Resources
	for i := range 5000 {
		r := run{
			host:      hosts[i%len(hosts)].ID,
			r:         model.ResourcesFromDecimal(cores[rng.IntN(len(cores))], float64(1+rng.IntN(300)), 0, 0),
			revocable: i%7 == 0,
		}
		c.Allocate(r.host, r.r, r.revocable)
		runs = append(runs, r)
		if !r.revocable {
			want = want.Add(r.r)
		}
	}
	if _, got := c.Capacity(); got != want {
		t.Fatalf("allocated %v after placing, want %v", got, want)
	}
	rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	for _, r := range runs {
		c.Release(r.host, r.r, r.revocable)
	}
	if _, got := c.Capacity(); !got.IsZero() {
		t.Errorf("cluster allocation %v after every run ended, want exactly zero", got)
	}
	if got := c.RevocableAllocated(); !got.IsZero() {
		t.Errorf("revocable allocation %v after every run ended, want exactly zero", got)
	}
	for _, v := range c.Snapshot() {
		if !v.Allocated.IsZero() || !v.Revocable.IsZero() || v.Tasks != 0 || v.Free() != v.Capacity {
			t.Errorf("%s: allocated %v, revocable %v, %d tasks, free %v of %v", v.ID, v.Allocated, v.Revocable, v.Tasks, v.Free(), v.Capacity)
		}
	}
	if got := model.CoresToMilli(0.1) + model.CoresToMilli(0.2); got != model.CoresToMilli(0.3) {
		t.Errorf("0.1 + 0.2 cores = %d millicores, want %d", got, model.CoresToMilli(0.3))
	}
}

// Labels lists the distinct values of each label on up hosts, and follows
// hosts that come, change labels, are drained or go.
func TestLabelsOfUpHosts(t *testing.T) {
	c := NewHostCache()
	host := func(name, zone string, state model.HostState) model.Host {
		return model.Host{ID: model.HostID("c/" + name), State: state, Labels: map[string]string{"zone": zone},
			Capacity: model.ResourcesFromDecimal(8, 1024, 0, 0)}
	}
	check := func(what string, want map[string][]string) {
		t.Helper()
		got := c.Labels()
		if len(got) != len(want) {
			t.Fatalf("%s: labels %v, want %v", what, got, want)
		}
		for k, vs := range want {
			if !slices.Equal(got[k], vs) {
				t.Fatalf("%s: labels %v, want %v", what, got, want)
			}
		}
	}
	c.Update([]model.Host{host("a", "z2", model.HostUp), host("b", "z1", model.HostUp), host("c", "z2", model.HostUp), host("d", "z9", model.HostDown)})
	check("three up, one down", map[string][]string{"zone": {"z1", "z2"}, model.LabelHost: {"c/a", "c/b", "c/c"}})
	c.Update([]model.Host{host("b", "z3", model.HostUp)})
	check("b moved to z3", map[string][]string{"zone": {"z2", "z3"}, model.LabelHost: {"c/a", "c/b", "c/c"}})
	c.SetDraining("c/b", true)
	check("b drained", map[string][]string{"zone": {"z2"}, model.LabelHost: {"c/a", "c/c"}})
	c.Remove([]model.HostID{"c/a", "c/c"})
	check("only b, drained", map[string][]string{})
	c.SetDraining("c/b", false)
	check("b back", map[string][]string{"zone": {"z3"}, model.LabelHost: {"c/b"}})
}
