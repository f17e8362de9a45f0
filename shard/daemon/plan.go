package daemon

import "github.com/peloton-federated/peloton/shard/model"

// Host is a host as a daemon job sees it.
type Host struct {
	ID model.HostID
	// Up: the host is up and its plugin reports it.
	Up     bool
	Labels map[string]string
}

// Instance is a live instance of a daemon job (not ended and not being
// stopped), pinned to Host.
type Instance struct {
	Instance uint32
	Host     model.HostID
}

// Decision is what a daemon job does now.
type Decision struct {
	// Stop are the instances to stop, in the order given.
	Stop []uint32
	// Start are the hosts that take the daemon and hold no instance of
	// it, in the order given.
	Start []model.HostID
}

// Takes reports whether a host takes a daemon job with these constraints.
func Takes(h *Host, constraints []model.Constraint) bool {
	if !h.Up {
		return false
	}
	for i := range constraints {
		if !constraints[i].Matches(h.Labels) {
			return false
		}
	}
	return true
}

// Plan decides a daemon job's instances: the first live instance on each
// host that takes the job stays; every other live instance stops (its
// host was drained, went away or no longer matches, or it is a second
// instance for its host, which a recovery could leave); every host that
// takes the job and holds none gets a new one.
func Plan(hosts []Host, constraints []model.Constraint, live []Instance) Decision {
	want := make(map[model.HostID]bool, len(hosts))
	for i := range hosts {
		want[hosts[i].ID] = Takes(&hosts[i], constraints)
	}
	var d Decision
	has := make(map[model.HostID]bool, len(live))
	for _, in := range live {
		if want[in.Host] && !has[in.Host] {
			has[in.Host] = true
			continue
		}
		d.Stop = append(d.Stop, in.Instance)
	}
	for i := range hosts {
		if id := hosts[i].ID; want[id] && !has[id] {
			has[id] = true
			d.Start = append(d.Start, id)
		}
	}
	return d
}
