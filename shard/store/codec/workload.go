package codec

import (
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// workload writes the container, ports, probes and volumes of a task
// (spec layout specV4 on).
func (e *encoder) workload(t *model.TaskSpec) {
	e.bool(t.Container != nil)
	if c := t.Container; c != nil {
		e.string(c.Image)
		e.byte(byte(c.PullPolicy))
	}
	e.count(len(t.Ports), t.Ports == nil)
	for _, p := range t.Ports {
		e.string(p.Name)
		e.uvarint(uint64(p.Port))
	}
	e.probe(t.HealthCheck)
	e.probe(t.Readiness)
	e.count(len(t.Volumes), t.Volumes == nil)
	for _, v := range t.Volumes {
		e.string(v.Name)
		e.varint(v.SizeMB)
		e.string(v.Path)
	}
}

func (d *decoder) workload(t *model.TaskSpec) {
	if d.bool() {
		t.Container = &model.Container{Image: d.string(), PullPolicy: model.PullPolicy(d.byte())}
	}
	if n, isNil := d.count(2); !isNil {
		t.Ports = make([]model.PortSpec, n)
		for i := range t.Ports {
			t.Ports[i] = model.PortSpec{Name: d.string(), Port: d.uint32()}
		}
	}
	t.HealthCheck = d.probe()
	t.Readiness = d.probe()
	if n, isNil := d.count(3); !isNil {
		t.Volumes = make([]model.Volume, n)
		for i := range t.Volumes {
			t.Volumes[i] = model.Volume{Name: d.string(), SizeMB: d.varint(), Path: d.string()}
		}
	}
}

func (e *encoder) probe(h *model.HealthCheck) {
	e.bool(h != nil)
	if h == nil {
		return
	}
	e.byte(byte(h.Kind))
	e.string(h.Command)
	e.strings(h.Args)
	e.string(h.Port)
	e.string(h.Path)
	e.varint(int64(h.InitialDelay))
	e.varint(int64(h.Interval))
	e.varint(int64(h.Timeout))
	e.uvarint(uint64(h.FailureThreshold))
}

func (d *decoder) probe() *model.HealthCheck {
	if !d.bool() {
		return nil
	}
	return &model.HealthCheck{
		Kind:             model.ProbeKind(d.byte()),
		Command:          d.string(),
		Args:             d.strings(),
		Port:             d.string(),
		Path:             d.string(),
		InitialDelay:     time.Duration(d.varint()),
		Interval:         time.Duration(d.varint()),
		Timeout:          time.Duration(d.varint()),
		FailureThreshold: d.uint32(),
	}
}

// placementLimits writes a job's per-host and spread limits (specV4 on).
func (e *encoder) placementLimits(s *model.JobSpec) {
	e.uvarint(uint64(s.MaxPerHost))
	e.count(len(s.Spread), s.Spread == nil)
	for _, l := range s.Spread {
		e.string(l.Label)
		e.uvarint(uint64(l.Max))
	}
	e.bool(s.SLA != nil)
	if s.SLA != nil {
		e.uvarint(uint64(s.SLA.MaxUnavailable))
		e.bool(s.SLA.Percent)
	}
}

func (d *decoder) placementLimits(s *model.JobSpec) {
	s.MaxPerHost = d.uint32()
	if n, isNil := d.count(2); !isNil {
		s.Spread = make([]model.SpreadSpec, n)
		for i := range s.Spread {
			s.Spread[i] = model.SpreadSpec{Label: d.string(), Max: d.uint32()}
		}
	}
	if d.bool() {
		s.SLA = &model.SLA{MaxUnavailable: d.uint32(), Percent: d.bool()}
	}
}

// taskWorkload writes what TaskRecordV3 adds to a task runtime.
func (e *encoder) taskWorkload(t *model.TaskRuntime) {
	e.byte(byte(t.Health))
	e.byte(byte(t.Ready))
	ports := t.Ports()
	e.count(len(ports), ports == nil)
	for _, p := range ports {
		e.string(p.Name)
		e.uvarint(uint64(p.Port))
	}
	e.string(string(t.PinnedHost()))
}

func (d *decoder) taskWorkload(t *model.TaskRuntime) {
	t.Health = model.HealthState(d.byte())
	t.Ready = model.HealthState(d.byte())
	var ports []model.NamedPort
	if n, isNil := d.count(2); !isNil {
		ports = make([]model.NamedPort, n)
		for i := range ports {
			ports[i] = model.NamedPort{Name: d.string(), Port: d.uint32()}
		}
	}
	t.Extra = nil
	if pinned := model.HostID(d.string()); len(ports) > 0 || pinned != "" {
		t.Extra = &model.TaskExtra{Ports: ports, PinnedHost: pinned}
	}
}

// cloneWorkload replaces the pointers and slices of a task's workload
// fields by copies.
func cloneWorkload(t *model.TaskSpec) {
	if t.Container != nil {
		c := *t.Container
		t.Container = &c
	}
	t.Ports = slices.Clone(t.Ports)
	for _, h := range []**model.HealthCheck{&t.HealthCheck, &t.Readiness} {
		if *h != nil {
			c := **h
			c.Args = slices.Clone(c.Args)
			*h = &c
		}
	}
	t.Volumes = slices.Clone(t.Volumes)
}
