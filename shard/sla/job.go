package sla

import "github.com/peloton-federated/peloton/shard/model"

// Available is the one rule for whether an instance counts as up: its
// run is RUNNING and its readiness probe says healthy, else its health
// check, else running is enough.
func Available(t *model.TaskRuntime) bool {
	if t == nil || t.State != model.TaskRunning {
		return false
	}
	switch {
	case t.Ready != model.HealthNone:
		return t.Ready == model.HealthHealthy
	case t.Health != model.HealthNone:
		return t.Health == model.HealthHealthy
	}
	return true
}

// Job is the value every disruption asks about: a job's instances as they
// stand and how many may be unavailable at once. A decision function
// takes its own copy (Clone) and asks Disrupt for each gang it would take
// down, in the order it would; each yes counts for the questions after it,
// so one step never takes more than the limit however many operations
// ask.
type Job struct {
	Limit     uint32
	Instances []Instance
}

// Clone returns a copy whose answers do not change j.
func (j *Job) Clone() *Job {
	if j == nil {
		return nil
	}
	return &Job{Limit: j.Limit, Instances: append([]Instance(nil), j.Instances...)}
}

// Ask decides which of ids may be disrupted now, changing nothing. The
// ids are taken down together (a gang): a gang larger than the limit may
// go down whole when nothing else of the job is unavailable, the least
// disruption it can ever have, where counting it instance by instance
// would hold it forever.
func (j *Job) Ask(ids []uint32) Decision {
	d := Evaluate(j.Limit, j.Instances, ids)
	if len(d.Held) > 0 && j.Limit > 0 && uint32(len(ids)) > j.Limit && j.aloneDown(ids) {
		d.Allowed, d.Held = append(d.Allowed, d.Held...), nil
	}
	return d
}

// aloneDown reports whether every id is an instance of the job and no
// instance outside ids is unavailable.
func (j *Job) aloneDown(ids []uint32) bool {
	in := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	known := 0
	for _, x := range j.Instances {
		switch {
		case in[x.ID]:
			known++
		case x.down():
			return false
		}
	}
	return known == len(in)
}

// Disrupt asks whether all of ids (a gang, taken down whole) may be
// disrupted now; if so they count as disrupted from now on. When they may
// not, why says so ("waiting for SLA: 2/2 unavailable"). A nil Job sets
// no limit.
func (j *Job) Disrupt(ids []uint32) (ok bool, why string) {
	if j == nil {
		return true, ""
	}
	if d := j.Ask(ids); len(d.Held) > 0 {
		return false, d.Reason()
	}
	j.Take(ids)
	return true, ""
}

// Take counts ids as disrupted from now on, asked or not (a disruption
// the job cannot refuse, such as a task that ended).
func (j *Job) Take(ids []uint32) {
	for i := range j.Instances {
		for _, id := range ids {
			if j.Instances[i].ID == id {
				j.Instances[i].Disrupted = true
			}
		}
	}
}

// Room is how many more instances may go down now.
func (j *Job) Room() uint32 {
	var down uint32
	for _, in := range j.Instances {
		if in.down() {
			down++
		}
	}
	return j.Limit - min(j.Limit, down)
}

// Gang returns the instances of gang number index, of size members, in a
// job whose gangs have gangSize instances (0: one; the last gang may have
// fewer): the ids Disrupt is asked about.
func Gang(gangSize, index, size uint32) []uint32 {
	first := index * max(gangSize, 1)
	ids := make([]uint32, size)
	for k := range ids {
		ids[k] = first + uint32(k)
	}
	return ids
}
