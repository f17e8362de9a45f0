package jobmgr

import (
	"context"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"

	"github.com/peloton-federated/peloton/shard/model"
)

// restartTasks kills the current runs of instances of a running job and
// starts new ones, a gang whole; the runs keep their config. A long-running
// job's SLA is asked first (refused with ErrSLA unless force). An instance
// that ended for good or is being stopped is refused: there is nothing to
// restart. It returns the instances as stored by the pass that took the
// restart.
func (s *jobShell) restartTasks(ctx context.Context, id model.JobID, instances []uint32, force bool) ([]*model.TaskRuntime, error) {
	if len(instances) == 0 {
		return nil, fmt.Errorf("instances: name at least one instance to restart: %w", core.ErrInvalid)
	}
	s.e.lock()
	out, err := s.e.c.Restart(id, instances, force)
	if err != nil {
		s.e.mu.Unlock()
		return nil, err
	}
	wait := s.e.awaitWrite()
	s.e.mu.Unlock()
	if err := wait(ctx); err != nil {
		return nil, fmt.Errorf("store the restart of job %s: %w", id, err)
	}
	return out, nil
}

// restartableGangs are the gangs of instances, when every one may be
