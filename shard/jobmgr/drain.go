package jobmgr

import (
	"context"
	"fmt"
	"github.com/peloton-federated/peloton/shard/jobmgr/internal/core"

	"github.com/peloton-federated/peloton/shard/maintenance"
	"github.com/peloton-federated/peloton/shard/model"
)

// Reasons of runs a host drain stopped.
const (
	ReasonHostDrained = maintenance.ReasonHostDrained
)

// ErrHostState: the host is not in a state the operation needs.
var ErrHostState = fmt.Errorf("host state: %w", core.ErrInvalid)

// markDown takes a drained host down for maintenance. A host that
// still runs something of the shard is refused, unless force, which kills
// what runs there.
func (s *hostShell) markDown(ctx context.Context, id model.HostID, force bool) (*model.HostRecord, error) {
	v, known := s.e.cfg.Hosts.View(id)
	s.e.hosts.mu.Lock()
	rec := s.e.hosts.recs[id]
	s.e.hosts.mu.Unlock()
	switch {
	case rec == nil && !known:
		return nil, fmt.Errorf("host %s: %w", id, core.ErrNotFound)
	case rec == nil || !rec.Draining:
		if !force {
			return nil, fmt.Errorf("host %s is UP: drain it first (peloton host drain), or use force: %w", id, ErrHostState)
		}
	case known && v.Tasks > 0 && !force:
		return nil, fmt.Errorf("host %s is DRAINING and still runs %d tasks: wait for DRAINED, or use force: %w", id, v.Tasks, ErrHostState)
	}
	if rec == nil || !rec.Draining {
		if _, err := s.setDrain(ctx, id, true, "marked down", 0); err != nil {
			return nil, err
		}
	}
	out, _, err := s.change(ctx, id, func(rec *model.HostRecord) error {
		rec.Down = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.e.c.Log.Info("host marked down", "host", id, "force", force)
	return out, nil
}
