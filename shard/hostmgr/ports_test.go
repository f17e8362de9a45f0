package hostmgr

import (
	"errors"
	"slices"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

// A script of port allocations and releases on one host with two small
// ranges: fixed ports as asked, free ones searched from where the last
// search stopped and wrapping around, nothing taken when a run cannot
// have all it asks for.
func TestAllocatePorts(t *testing.T) {
	c := NewHostCache()
	host := model.Host{ID: "c/h", State: model.HostUp, Ports: []model.PortRange{{From: 100, To: 102}, {From: 200, To: 201}}}
	c.Update([]model.Host{host})
	dyn := func(names ...string) (specs []model.PortSpec) {
		for _, n := range names {
			specs = append(specs, model.PortSpec{Name: n})
		}
		return specs
	}
	steps := []struct {
		name    string
		release []uint32 // given back before the allocation
		specs   []model.PortSpec
		want    []uint32 // nil: refused
		err     string
	}{
		{"a fixed port outside the ranges and a free one", nil, []model.PortSpec{{Name: "a", Port: 8080}, {Name: "b"}}, []uint32{8080, 100}, ""},
		{"the search goes on from the last port", nil, dyn("x", "y"), []uint32{101, 102}, ""},
		{"a held fixed port", nil, []model.PortSpec{{Name: "a", Port: 101}}, nil, "host port in use: 101 on c/h"},
		{"a port asked twice", nil, []model.PortSpec{{Name: "a", Port: 9000}, {Name: "b", Port: 9000}}, nil, "host port in use: 9000 on c/h"},
		{"into the next range", nil, dyn("x"), []uint32{200}, ""},
		{"too few free ports", nil, dyn("x", "y"), nil, "host port in use: c/h has 1 free ports, the run needs 2"},
		{"a fixed port inside a range", nil, []model.PortSpec{{Name: "a", Port: 201}}, []uint32{201}, ""},
		{"none free", nil, dyn("x"), nil, "host port in use: c/h has 0 free ports, the run needs 1"},
		{"wrapping around to released ports", []uint32{100, 102}, dyn("x", "y"), []uint32{100, 102}, ""},
	}
	for _, s := range steps {
		var back []model.NamedPort
		for _, p := range s.release {
			back = append(back, model.NamedPort{Port: p})
		}
		c.ReleasePorts(host.ID, back)
		got, err := c.AllocatePorts(host.ID, s.specs)
		var ports []uint32
		for i, p := range got {
			if p.Name != s.specs[i].Name {
				t.Errorf("%s: port %d named %q, want %q", s.name, i, p.Name, s.specs[i].Name)
			}
			ports = append(ports, p.Port)
		}
		switch {
		case s.err == "" && (err != nil || !slices.Equal(ports, s.want)):
			t.Errorf("%s: %v, %v; want %v", s.name, ports, err, s.want)
		case s.err != "" && (!errors.Is(err, ErrPortInUse) || err.Error() != s.err || got != nil):
			t.Errorf("%s: %v, %v; want the error %q", s.name, ports, err, s.err)
		}
	}
}

// A host not reported yet records the ports of its runs too, and held
// ports count whether or not they were free.
func TestHoldPortsOnAHostNotReportedYet(t *testing.T) {
	c := NewHostCache()
	c.HoldPorts("c/later", []model.NamedPort{{Name: "a", Port: 31000}})
	if _, err := c.AllocatePorts("c/later", []model.PortSpec{{Name: "a", Port: 31000}}); !errors.Is(err, ErrPortInUse) {
		t.Fatalf("a held port allocated again: %v", err)
	}
	got, err := c.AllocatePorts("c/later", []model.PortSpec{{Name: "a", Port: 31001}})
	if err != nil || len(got) != 1 || got[0].Port != 31001 {
		t.Fatalf("AllocatePorts = %v, %v", got, err)
	}
}
