package hostmgr

import (
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestOversize(t *testing.T) {
	small := model.Resources{MilliCPU: 8000, MemMB: 32768, DiskMB: 100000}
	gpuBox := model.Resources{MilliCPU: 4000, MemMB: 16384, DiskMB: 1000, GPU: 2}
	shapes := []model.Resources{small, gpuBox}
	cases := []struct {
		name  string
		r     model.Resources
		field string
		msg   string
	}{
		{"fits the small host", model.Resources{MilliCPU: 8000, MemMB: 1}, "", ""},
		{"fits the gpu host", model.Resources{MilliCPU: 1000, GPU: 2}, "", ""},
		{"too many cores", model.Resources{MilliCPU: 8001}, "cpu", "8.001 cores is larger than any host: the largest has 8 cores"},
		{"too much memory", model.Resources{MemMB: 65536}, "mem_mb", "the largest has 32768 MiB"},
		{"too many gpus", model.Resources{GPU: 3}, "gpu", "the most a host has is 2"},
		{"no host has it all", model.Resources{MilliCPU: 8000, GPU: 1}, "", "no host has all of"},
	}
	for _, c := range cases {
		field, msg, ok := Oversize(c.r, shapes)
		if ok != (c.msg == "") || field != c.field || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: got (%q, %q, %v), want field %q and %q", c.name, field, msg, ok, c.field, c.msg)
		}
	}
	if _, _, ok := Oversize(model.Resources{MilliCPU: 1 << 40}, nil); !ok {
		t.Error("with no host known yet, nothing can be judged too large")
	}
}

func TestHostCacheShapes(t *testing.T) {
	c := NewHostCache()
	a := model.Resources{MilliCPU: 8000, MemMB: 1024}
	b := model.Resources{MilliCPU: 16000, MemMB: 1024}
	c.Update([]model.Host{{ID: "x/1", State: model.HostUp, Capacity: a}, {ID: "x/2", State: model.HostDown, Capacity: a}})
	if got := c.Shapes(); len(got) != 1 || got[0] != a {
		t.Fatalf("shapes %v, want [%v]", got, a)
	}
	c.Update([]model.Host{{ID: "x/2", State: model.HostUp, Capacity: b}})
	if got := c.Shapes(); len(got) != 2 {
		t.Fatalf("shapes %v, want two", got)
	}
	c.Remove([]model.HostID{"x/2"})
	if got := c.Shapes(); len(got) != 1 || got[0] != a {
		t.Fatalf("after remove: shapes %v, want [%v]", got, a)
	}
}
