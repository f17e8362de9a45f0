package core

import (
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/placement"
)

// limitCounts counts, per host, the runs holding resources there of each
// job whose placement limits count instances (max per host, spread, a
// fixed port): what the host index must know of every host, beyond one
// placement pass, for the limits to hold while tasks end and are replaced.
// Keys are job ids, the group placement counts a job's instances under.
type limitCounts map[model.HostID]map[string]int

// limited reports whether a task's placement counts its job's instances.
func (je *Job) limited(t *model.TaskRuntime) bool {
	spec := &je.Job.Spec
	if spec.MaxPerHost > 0 || len(spec.Spread) > 0 {
		return true
	}
	for _, p := range je.config(t.ConfigVersion).ports(t.ID.Instance) {
		if p.Port != 0 {
			return true
		}
	}
	return false
}

// Add counts a run of t's job on host (d = 1) or uncounts it (d = -1).
func (c limitCounts) Add(host model.HostID, job model.JobID, d int) {
	m := c[host]
	if m == nil {
		if d < 0 {
			return
		}
		m = map[string]int{}
		c[host] = m
	}
	n := m[string(job)] + d
	if n <= 0 {
		delete(m, string(job))
		if len(m) == 0 {
			delete(c, host)
		}
		return
	}
	m[string(job)] = n
}

// onHost returns a copy of a host's counts for the index, nil when none.
func (c limitCounts) onHost(host model.HostID) map[string]int {
	m := c[host]
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// indexed is the host as the index keeps it: placementHost with the
// instance counts of limited jobs, closed while it is held for a
// reservation.
func (b *indexBook) indexed(e *State, h placement.Host) placement.Host {
	h.Instances = b.counts.onHost(h.ID)
	return e.Reserve.hide(h)
}
