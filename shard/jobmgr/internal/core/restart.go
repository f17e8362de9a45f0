package core

import (
	"github.com/peloton-federated/peloton/shard/model"
)

// reasonRestarted marks runs an operator restarted.
const reasonRestarted = "RESTARTED"

// Restart kills the current runs of instances (each gang whole) so that
// new ones start on the same config, under the job's SLA unless forced,
// and returns copies of the gangs' tasks as they are now.
func (e *State) Restart(id model.JobID, instances []uint32, force bool) ([]*model.TaskRuntime, error) {
	gangs, err := disruptions{e}.restartableGangs(id, instances, force)
	if err != nil {
		return nil, err
	}
	je := e.Jobs[id]
	for _, g := range gangs {
		e.Queue.restartGang(e, je, g, reasonRestarted, "restarted by an operator", e.Now)
	}
	e.Visit(je)
	out := make([]*model.TaskRuntime, 0, len(instances))
	for _, g := range gangs {
		for _, t := range je.members(g) {
			cp := *t
			out = append(out, &cp)
		}
	}
	return out, nil
}
