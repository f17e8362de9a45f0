package jobmgr

import (
	"context"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// removeVolumes deletes the persistent volumes of a stateful job's
// instances, on each instance's host, through plugins that keep volumes.
// Volumes on hosts no longer known went with their hosts.
func (s *jobShell) removeVolumes(ctx context.Context, job model.JobID, cfg *core.ConfigView) error {
	if cfg.Spec.Type != model.JobStateful {
		return nil
	}
	tasks, err := s.e.cfg.Store.ListTasks(ctx, job)
	if err != nil {
		return fmt.Errorf("read tasks of job %s: %w", job, err)
	}
	byHost := map[model.HostID][]string{}
	for _, t := range tasks {
		pin := t.PinnedHost()
		if pin == "" {
			continue
		}
		task := cfg.Task(t.ID.Instance)
		for _, v := range task.Volumes {
			byHost[pin] = append(byHost[pin], model.VolumeID(t.ID, v.Name))
		}
	}
	for host, ids := range byHost {
		r, ok := s.e.c.Plugins[core.ClusterOf(host)].(hostmgr.VolumeRemover)
		if !ok || !s.e.cfg.Hosts.Has(host) {
			continue
		}
		if err := r.RemoveVolumes(ctx, host, ids); err != nil {
			return fmt.Errorf("remove volumes of job %s on %s: %w", job, host, err)
		}
		s.e.c.Log.Info("volumes removed", "job", job, "host", host, "volumes", len(ids))
	}
	return nil
}
