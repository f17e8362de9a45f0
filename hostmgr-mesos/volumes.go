package mesos

import (
	"context"
	"fmt"
	"sort"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/peloton-federated/peloton/shard/model"
)

// RemoveVolumes implements hostmgr.VolumeRemover: the volumes are
// destroyed and their disk unreserved (DESTROY + UNRESERVE in one
// ACCEPT) when an offer of the agent next holds them, which is once no
// run uses them. It returns once the removal is queued.
func (p *Plugin) RemoveVolumes(ctx context.Context, host model.HostID, ids []string) error {
	now := p.clock.Now()
	p.mu.Lock()
	a := p.byHost[host]
	if a == nil {
		p.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownHost, host)
	}
	for _, id := range ids {
		a.removals[id] = true
	}
	accepts := p.removalsLocked(a)
	c := p.conn
	revive := c != nil && len(accepts) == 0 && len(a.offers) == 0
	if revive {
		p.suppressed, p.lastRevive = false, now
	}
	p.lastDemand = now
	p.mu.Unlock()
	if revive {
		if err := p.call(ctx, c, calls.Revive()); err != nil {
			p.log.Warn("reviving offers for volume removal", "err", err)
		}
	}
	for _, ac := range accepts {
		p.spawn(nil, func() { p.sendAccept(ctx, c, ac) })
	}
	return nil
}

// removalsLocked builds the ACCEPT that removes the agent's volumes its
// held offers show and RemoveVolumes asked for. The offers it uses are no
// longer held.
func (p *Plugin) removalsLocked(a *agentState) []acceptCall {
	if len(a.removals) == 0 || p.conn == nil {
		return nil
	}
	ids := make([]string, 0, len(a.offers))
	for id := range a.offers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ac := acceptCall{agent: a}
	for _, id := range ids {
		o := a.offers[id]
		used := false
		for _, r := range o.resources {
			vid := r.GetDisk().GetPersistence().GetID()
			if vid == "" || !a.removals[vid] {
				continue
			}
			used = true
			ac.destroy = append(ac.destroy, r)
			ac.unreserve = append(ac.unreserve, withoutVolume(r))
			delete(a.removals, vid)
			delete(a.volumes, vid)
		}
		if used {
			ac.offerIDs = append(ac.offerIDs, mesoslib.OfferID{Value: id})
			delete(a.offers, id)
			delete(p.offers, id)
		}
	}
	if len(ac.destroy) == 0 {
		return nil
	}
	p.log.Info("removing persistent volumes", "agent", a.id, "volumes", len(ac.destroy))
	return []acceptCall{ac}
}

// withoutVolume is the reserved disk a persistent volume was created on.
func withoutVolume(r mesoslib.Resource) mesoslib.Resource {
	if src := r.GetDisk().GetSource(); src != nil {
		r.Disk = &mesoslib.Resource_DiskInfo{Source: src}
	} else {
		r.Disk = nil
	}
	return r
}

// removalsPendingLocked reports whether a volume removal waits for an
// offer.
func (p *Plugin) removalsPendingLocked() bool {
	for _, a := range p.agents {
		if len(a.removals) > 0 {
			return true
		}
	}
	return false
}
