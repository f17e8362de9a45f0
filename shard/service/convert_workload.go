package service

import (
	"sort"
	"strconv"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"google.golang.org/protobuf/types/known/durationpb"
)

// workloadToModel copies the container, ports, probes and volumes of a
// validated task spec into t.
func workloadToModel(p *pb.TaskSpec, t *model.TaskSpec) {
	if c := p.GetContainer(); c != nil {
		pull := model.PullPolicy(c.GetPullPolicy())
		if pull == 0 {
			pull = model.PullIfNotPresent
		}
		t.Container = &model.Container{Image: c.GetImage(), PullPolicy: pull}
	}
	if ps := p.GetPorts(); ps != nil {
		t.Ports = make([]model.PortSpec, len(ps))
		for i, port := range ps {
			t.Ports[i] = model.PortSpec{Name: port.GetName(), Port: port.GetPort()}
		}
	}
	t.HealthCheck = probeToModel(p.GetHealthCheck())
	t.Readiness = probeToModel(p.GetReadiness())
	if vs := p.GetVolumes(); vs != nil {
		t.Volumes = make([]model.Volume, len(vs))
		for i, v := range vs {
			t.Volumes[i] = model.Volume{Name: v.GetName(), SizeMB: int64(v.GetSizeMb()), Path: v.GetPath()}
		}
	}
}

func probeToModel(h *pb.HealthCheck) *model.HealthCheck {
	if h == nil {
		return nil
	}
	out := &model.HealthCheck{
		InitialDelay:     h.GetInitialDelay().AsDuration(),
		Interval:         h.GetInterval().AsDuration(),
		Timeout:          h.GetTimeout().AsDuration(),
		FailureThreshold: h.GetFailureThreshold(),
	}
	switch {
	case len(h.GetCommand()) > 0:
		out.Kind, out.Command, out.Args = model.ProbeCommand, h.GetCommand()[0], h.GetCommand()[1:]
	case h.GetHttp() != nil:
		out.Kind, out.Port, out.Path = model.ProbeHTTP, h.GetHttp().GetPort(), h.GetHttp().GetPath()
		if out.Path == "" {
			out.Path = "/"
		}
	case h.GetTcp() != nil:
		out.Kind, out.Port = model.ProbeTCP, h.GetTcp().GetPort()
	}
	return out
}

// workloadToProto copies the container, ports, probes and volumes of t
// into p.
func workloadToProto(t *model.TaskSpec, p *pb.TaskSpec) {
	if c := t.Container; c != nil {
		p.Container = &pb.Container{Image: c.Image, PullPolicy: pb.PullPolicy(c.PullPolicy)}
	}
	if t.Ports != nil {
		p.Ports = make([]*pb.PortSpec, len(t.Ports))
		for i, port := range t.Ports {
			p.Ports[i] = &pb.PortSpec{Name: port.Name, Port: port.Port}
		}
	}
	p.HealthCheck = probeToProto(t.HealthCheck)
	p.Readiness = probeToProto(t.Readiness)
	if t.Volumes != nil {
		p.Volumes = make([]*pb.Volume, len(t.Volumes))
		for i, v := range t.Volumes {
			p.Volumes[i] = &pb.Volume{Name: v.Name, SizeMb: uint64(v.SizeMB), Path: v.Path}
		}
	}
}

func probeToProto(h *model.HealthCheck) *pb.HealthCheck {
	if h == nil {
		return nil
	}
	dur := func(d time.Duration) *durationpb.Duration {
		if d == 0 {
			return nil
		}
		return durationpb.New(d)
	}
	out := &pb.HealthCheck{
		InitialDelay:     dur(h.InitialDelay),
		Interval:         dur(h.Interval),
		Timeout:          dur(h.Timeout),
		FailureThreshold: h.FailureThreshold,
	}
	switch h.Kind {
	case model.ProbeCommand:
		out.Command = append([]string{h.Command}, h.Args...)
	case model.ProbeHTTP:
		out.Http = &pb.HTTPProbe{Port: h.Port, Path: h.Path}
	case model.ProbeTCP:
		out.Tcp = &pb.TCPProbe{Port: h.Port}
	}
	return out
}

func spreadToModel(ss []*pb.SpreadSpec) []model.SpreadSpec {
	if len(ss) == 0 {
		return nil
	}
	out := make([]model.SpreadSpec, len(ss))
	for i, s := range ss {
		out[i] = model.SpreadSpec{Label: s.GetLabel(), Max: s.GetMax()}
	}
	return out
}

func spreadToProto(ss []model.SpreadSpec) []*pb.SpreadSpec {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*pb.SpreadSpec, len(ss))
	for i, s := range ss {
		out[i] = &pb.SpreadSpec{Label: s.Label, Max: s.Max}
	}
	return out
}

func portsToProto(ps []model.NamedPort) map[string]uint32 {
	if len(ps) == 0 {
		return nil
	}
	out := make(map[string]uint32, len(ps))
	for _, p := range ps {
		out[p.Name] = p.Port
	}
	return out
}

// portRangesToProto renders ranges as "31000-32000" (or "8080" alone).
func portRangesToProto(rs []model.PortRange) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.From == r.To {
			out = append(out, strconv.FormatUint(uint64(r.From), 10))
			continue
		}
		out = append(out, strconv.FormatUint(uint64(r.From), 10)+"-"+strconv.FormatUint(uint64(r.To), 10))
	}
	sort.Strings(out)
	return out
}

func slaToModel(s *pb.SLA) *model.SLA {
	if s.GetMaxUnavailable() == "" {
		return nil
	}
	n, pct, _ := pb.ParseMaxUnavailable(s.GetMaxUnavailable()) // validated
	return &model.SLA{MaxUnavailable: n, Percent: pct}
}

func slaToProto(s *model.SLA) *pb.SLA {
	if s == nil {
		return nil
	}
	v := strconv.FormatUint(uint64(s.MaxUnavailable), 10)
	if s.Percent {
		v += "%"
	}
	return &pb.SLA{MaxUnavailable: v}
}
