package hostmgr

import (
	"errors"
	"fmt"
	"maps"

	"github.com/peloton-federated/peloton/shard/model"
)

// ErrPortInUse reports a fixed port another run holds on the host.
var ErrPortInUse = errors.New("host port in use")

// hostPorts is what the shard's runs hold of one host's ports.
type hostPorts struct {
	used map[uint32]bool
	// inRange counts used ports inside the host's ranges.
	inRange int
	// next is where the search for a free port starts, so that a port
	// just given back is not handed out again at once.
	next uint32
}

func inRanges(rs []model.PortRange, p uint32) bool {
	for _, r := range rs {
		if p >= r.From && p <= r.To {
			return true
		}
	}
	return false
}

// AllocatePorts gives a run on host id the ports of specs: fixed ones as
// asked, the others free ports of the host's ranges. It fails without
// taking anything when a fixed port is held, or the ranges have too few
// free ports. Ports on hosts not reported yet are recorded too.
func (c *HostCache) AllocatePorts(id model.HostID, specs []model.PortSpec) ([]model.NamedPort, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	hp := &e.ports
	out := make([]model.NamedPort, len(specs))
	taken := make(map[uint32]bool, len(specs))
	dynamic := 0
	for i, s := range specs {
		out[i].Name = s.Name
		if s.Port == 0 {
			dynamic++
			continue
		}
		if hp.used[s.Port] || taken[s.Port] {
			return nil, fmt.Errorf("%w: %d on %s", ErrPortInUse, s.Port, id)
		}
		taken[s.Port] = true
		out[i].Port = s.Port
	}
	if dynamic > 0 {
		free := hp.free(e.host.Ports, taken, dynamic)
		if len(free) < dynamic {
			return nil, fmt.Errorf("%w: %s has %d free ports, the run needs %d", ErrPortInUse, id, portCount(e.host.Ports)-hp.inRange, dynamic)
		}
		for i := range out {
			if out[i].Port == 0 {
				out[i].Port, free = free[0], free[1:]
			}
		}
	}
	hp.hold(e.host.Ports, out)
	c.version++
	return out, nil
}

// free finds n ports of ranges neither used nor taken, adding them to
// taken: it scans the ranges once, from where the last search stopped
// (next) and then from their start up to there, and moves next past the
// last port found. It returns fewer when there are not so many.
func (hp *hostPorts) free(ranges []model.PortRange, taken map[uint32]bool, n int) []uint32 {
	var free []uint32
	for pass := 0; pass < 2 && len(free) < n; pass++ {
		for _, r := range ranges {
			for p := uint64(r.From); p <= uint64(r.To) && len(free) < n; p++ {
				port := uint32(p)
				fromNext := port >= hp.next
				if fromNext == (pass == 0) && !hp.used[port] && !taken[port] {
					free = append(free, port)
					taken[port] = true
				}
			}
		}
	}
	if len(free) == n {
		hp.next = free[n-1] + 1
	}
	return free
}

// portCount is how many ports ranges hold.
func portCount(ranges []model.PortRange) int {
	total := 0
	for _, r := range ranges {
		total += r.Size()
	}
	return total
}

// hold marks ports used, counting those inside the host's ranges.
func (hp *hostPorts) hold(ranges []model.PortRange, ports []model.NamedPort) {
	if hp.used == nil {
		hp.used = map[uint32]bool{}
	}
	for _, p := range ports {
		if !hp.used[p.Port] {
			hp.used[p.Port] = true
			if inRanges(ranges, p.Port) {
				hp.inRange++
			}
		}
	}
}

// HoldPorts records ports a run already holds (a run recovered after a
// restart), whether or not they are free.
func (c *HostCache) HoldPorts(id model.HostID, ports []model.NamedPort) {
	if len(ports) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	e.ports.hold(e.host.Ports, ports)
	c.version++
}

// ReleasePorts gives back what AllocatePorts or HoldPorts took.
func (c *HostCache) ReleasePorts(id model.HostID, ports []model.NamedPort) {
	if len(ports) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.hosts[id]
	if !ok {
		return
	}
	for _, p := range ports {
		if e.ports.used[p.Port] {
			delete(e.ports.used, p.Port)
			if inRanges(e.host.Ports, p.Port) {
				e.ports.inRange--
			}
		}
	}
	c.version++
}

// recountPorts recounts the used ports inside a host's ranges after its
// ranges changed.
func (e *hostEntry) recountPorts() {
	e.ports.inRange = 0
	for p := range e.ports.used {
		if inRanges(e.host.Ports, p) {
			e.ports.inRange++
		}
	}
}

// withShardLabels returns the host as the shard shows it: its ranges
// defaulted, and the labels placement pins tasks with added to its own.
func withShardLabels(h model.Host) model.Host {
	if len(h.Ports) == 0 {
		h.Ports = model.DefaultPorts
	}
	labels := make(map[string]string, len(h.Labels)+2)
	maps.Copy(labels, h.Labels)
	labels[model.LabelHost] = string(h.ID)
	if h.RunsImages {
		labels[model.LabelRunsImages] = "true"
	} else {
		delete(labels, model.LabelRunsImages)
	}
	h.Labels = labels
	return h
}
