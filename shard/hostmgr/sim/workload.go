package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// EnvHealth is what a simulated run's probes say: "healthy" (the default)
// or "unhealthy". A run whose task has a health check or readiness probe
// reports the verdict with RUNNING.
const EnvHealth = "PELOTON_SIM_HEALTH"

// Simulated hosts honour the workload fields closely enough for the
// scheduler's own checks: a host port is held by one run at a time, and a
// persistent volume lives on the host it was made on.

// takeWorkloadLocked checks and takes what a launch asks of its host
// beyond resources: its ports and volumes. It returns why the launch
// fails, or "".
func (p *Plugin) takeWorkloadLocked(h *simHost, r *simRun, l *hostmgr.Launch) string {
	for _, port := range l.Ports {
		if holder, busy := h.ports[port.Port]; busy {
			return fmt.Sprintf("host port %d on %s is held by run %s", port.Port, h.host.ID, holder)
		}
	}
	for _, v := range l.Volumes {
		if where, ok := p.volumes[v.ID]; ok && where != h.host.ID {
			return fmt.Sprintf("volume %s lives on %s, not %s", v.ID, where, h.host.ID)
		}
	}
	if h.ports == nil && len(l.Ports) > 0 {
		h.ports = map[uint32]model.RunID{}
	}
	for _, port := range l.Ports {
		h.ports[port.Port] = r.id
		r.ports = append(r.ports, port.Port)
	}
	for _, v := range l.Volumes {
		p.volumes[v.ID] = h.host.ID
	}
	if l.Task != nil && (l.Task.HealthCheck != nil || l.Task.Readiness != nil) {
		verdict := model.HealthHealthy
		if strings.EqualFold(l.Task.Env[EnvHealth], "unhealthy") {
			verdict = model.HealthUnhealthy
		}
		// The first probe runs after its initial delay; until then the
		// run's probes have no verdict.
		var delay time.Duration
		if hc := l.Task.HealthCheck; hc != nil {
			r.health = verdict
			delay = hc.InitialDelay
		}
		if rd := l.Task.Readiness; rd != nil {
			r.ready = verdict
			delay = max(delay, rd.InitialDelay)
		}
		if delay > 0 {
			r.verdict, r.verdictDue = verdict, r.at+int64(delay)
			if r.health != model.HealthNone {
				r.health = model.HealthUnknown
			}
			if r.ready != model.HealthNone {
				r.ready = model.HealthUnknown
			}
			p.probing = append(p.probing, r)
		}
	}
	return ""
}

// settleProbesLocked gives the runs whose probes' initial delay passed
// their verdict, and returns when the next one is due (0: none).
func (p *Plugin) settleProbesLocked(nowNanos int64) (next int64) {
	kept := p.probing[:0]
	for _, r := range p.probing {
		switch {
		case r.state != model.TaskRunning || p.runs[r.id] != r:
		case r.verdictDue <= nowNanos:
			if r.health != model.HealthNone {
				r.health = r.verdict
			}
			if r.ready != model.HealthNone {
				r.ready = r.verdict
			}
			p.reportLocked(r.status())
		default:
			kept = append(kept, r)
			if next == 0 || r.verdictDue < next {
				next = r.verdictDue
			}
		}
	}
	clear(p.probing[len(kept):])
	p.probing = kept
	return next
}

// releaseWorkloadLocked gives back the ports of an ended run.
func releaseWorkloadLocked(r *simRun) {
	for _, port := range r.ports {
		if r.host.ports[port] == r.id {
			delete(r.host.ports, port)
		}
	}
	r.ports = nil
}

// SetHealth changes what a running run's health check says, and reports
// it: a test's way of making an instance fail its probe.
func (p *Plugin) SetHealth(run model.RunID, health model.HealthState) error {
	p.mu.Lock()
	r, ok := p.runs[run]
	if !ok || r.state != model.TaskRunning {
		p.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotRunning, run)
	}
	r.health = health
	p.reportLocked(r.status())
	p.mu.Unlock()
	p.wake()
	return nil
}

// Volumes returns where each persistent volume lives.
func (p *Plugin) Volumes() map[string]model.HostID {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]model.HostID, len(p.volumes))
	for id, h := range p.volumes {
		out[id] = h
	}
	return out
}

// RemoveVolumes implements hostmgr.VolumeRemover.
func (p *Plugin) RemoveVolumes(ctx context.Context, host model.HostID, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if p.volumes[id] == host {
			delete(p.volumes, id)
		}
	}
	return nil
}

var _ hostmgr.VolumeRemover = (*Plugin)(nil)
