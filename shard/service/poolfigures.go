package service

import (
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// poolCounts are a pool's figures that its engine view leaves out: the
// demand before caps, and its tasks waiting for a host and running, the
// pool's children's included.
type poolCounts struct {
	uncapped         model.Resources
	pending, running int
}

// waitingStates are the states of a task not yet given a host.
var waitingStates = [...]model.TaskState{model.TaskInitialized, model.TaskPending, model.TaskReady, model.TaskPlacing}

// countsOf reads every pool's counts from the engine's stats.
func countsOf(st jobmgr.Stats) map[string]poolCounts {
	out := make(map[string]poolCounts, len(st.Pools))
	for _, f := range st.Pools {
		c := out[f.Path]
		c.uncapped = f.UncappedDemand
		out[f.Path] = c
	}
	for ps, n := range st.Tasks {
		waiting := false
		for _, s := range waitingStates {
			waiting = waiting || ps.State == s
		}
		if !waiting && ps.State != model.TaskRunning {
			continue
		}
		for _, p := range ancestry(ps.Pool) {
			c := out[p]
			if waiting {
				c.pending += n
			} else {
				c.running += n
			}
			out[p] = c
		}
	}
	return out
}

// ancestry is a pool's path and its parents' up to the root.
func ancestry(path string) []string {
	out := []string{path}
	for path != jobmgr.RootPool && path != "" {
		i := strings.LastIndex(path, "/")
		path = path[:i]
		if path == "" {
			path = jobmgr.RootPool
		}
		out = append(out, path)
	}
	return out
}

// withCounts adds a pool's counts to its API form.
func withCounts(p *pb.Pool, c poolCounts) *pb.Pool {
	p.PendingTasks, p.RunningTasks = uint32(c.pending), uint32(c.running)
	for i, r := range p.Resources {
		r.UncappedDemand = model.DecimalOf(i, c.uncapped.Get(i))
	}
	return p
}
