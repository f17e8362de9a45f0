package cli

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// The fake's updates: each GetUpdate moves one batch (all instances when
// the batch size is 0). A new spec labelled update=abort is aborted at the
// first GetUpdate after one batch moved.

func (s fakeJobService) UpdateJob(_ context.Context, req *pelotonv1.UpdateJobRequest) (*pelotonv1.UpdateJobResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[req.GetJobId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetJobId())
	}
	problems := append(pelotonv1.UnknownFieldProblems(req), pelotonv1.ValidateJobSpec(req.GetSpec())...)
	if err := pelotonv1.NewSpecError(problems); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	spec := proto.Clone(req.GetSpec()).(*pelotonv1.JobSpec)
	pelotonv1.ApplyJobSpecDefaults(spec)
	f.configs[j.job.GetId()] = append(f.configs[j.job.GetId()], spec)
	v := uint64(len(f.configs[j.job.GetId()]))
	u := &pelotonv1.Update{
		Id: fmt.Sprintf("%s.%d", j.job.GetId(), v), JobId: j.job.GetId(), FromVersion: v - 1, ToVersion: v,
		BatchSize: req.GetBatchSize(), State: pelotonv1.UpdateState_UPDATE_STATE_ROLLING_FORWARD,
		InstancesTotal: spec.GetInstances(), CreateTime: timestamppb.Now(),
	}
	f.updates[u.Id] = u
	j.job.Spec, j.job.ConfigVersion, j.job.Status.UpdateId = spec, v, u.Id
	return &pelotonv1.UpdateJobResponse{Update: proto.Clone(u).(*pelotonv1.Update)}, nil
}

func (s fakeJobService) GetUpdate(_ context.Context, req *pelotonv1.GetUpdateRequest) (*pelotonv1.GetUpdateResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.updates[req.GetUpdateId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "update %s not found", req.GetUpdateId())
	}
	if u.GetState() == pelotonv1.UpdateState_UPDATE_STATE_ROLLING_FORWARD {
		spec := f.configs[u.GetJobId()][u.GetToVersion()-1]
		switch {
		case spec.GetLabels()["update"] == "abort" && u.InstancesDone > 0:
			u.State, u.Message, u.CompletionTime = pelotonv1.UpdateState_UPDATE_STATE_ABORTED, "aborted by an operator", timestamppb.Now()
		case u.BatchSize == 0:
			u.InstancesDone = u.InstancesTotal
		default:
			u.InstancesDone = min(u.InstancesDone+u.BatchSize, u.InstancesTotal)
		}
		if u.InstancesDone == u.InstancesTotal && u.State == pelotonv1.UpdateState_UPDATE_STATE_ROLLING_FORWARD {
			u.State, u.CompletionTime = pelotonv1.UpdateState_UPDATE_STATE_SUCCEEDED, timestamppb.Now()
		}
	}
	return &pelotonv1.GetUpdateResponse{Update: proto.Clone(u).(*pelotonv1.Update)}, nil
}

func (s fakeJobService) ListUpdates(_ context.Context, req *pelotonv1.ListUpdatesRequest) (*pelotonv1.ListUpdatesResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.jobs[req.GetJobId()]; !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetJobId())
	}
	resp := &pelotonv1.ListUpdatesResponse{}
	for v := 2; v <= len(f.configs[req.GetJobId()]); v++ {
		resp.Updates = append(resp.Updates, proto.Clone(f.updates[fmt.Sprintf("%s.%d", req.GetJobId(), v)]).(*pelotonv1.Update))
	}
	return resp, nil
}

func (s fakeJobService) AbortUpdate(_ context.Context, req *pelotonv1.AbortUpdateRequest) (*pelotonv1.AbortUpdateResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.updates[req.GetUpdateId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "update %s not found", req.GetUpdateId())
	}
	if updateEnded(u.GetState()) {
		return nil, status.Errorf(codes.FailedPrecondition, "update %s has ended %s", u.GetId(), shortState(u.GetState()))
	}
	u.State, u.Message, u.CompletionTime = pelotonv1.UpdateState_UPDATE_STATE_ABORTED, "aborted by an operator", timestamppb.Now()
	return &pelotonv1.AbortUpdateResponse{Update: proto.Clone(u).(*pelotonv1.Update)}, nil
}

func (s fakeJobService) GetJobConfig(_ context.Context, req *pelotonv1.GetJobConfigRequest) (*pelotonv1.GetJobConfigResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	configs, ok := f.configs[req.GetJobId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetJobId())
	}
	v := req.GetVersion()
	if v == 0 {
		v = uint64(len(configs))
	}
	if v > uint64(len(configs)) {
		return nil, status.Errorf(codes.NotFound, "job %s has no config version %d", req.GetJobId(), v)
	}
	resp := &pelotonv1.GetJobConfigResponse{Spec: proto.Clone(configs[v-1]).(*pelotonv1.JobSpec), Version: v}
	for i := range configs {
		resp.Versions = append(resp.Versions, uint64(i+1))
	}
	return resp, nil
}

func (s fakeJobService) ListEvents(_ context.Context, req *pelotonv1.ListEventsRequest) (*pelotonv1.ListEventsResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.jobs[req.GetJobId()]; !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetJobId())
	}
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = 1000
	}
	resp := &pelotonv1.ListEventsResponse{}
	for _, ev := range f.events[req.GetJobId()] {
		switch {
		case ev.GetSeq() <= req.GetAfterSeq():
		case req.Instance != nil && (ev.GetTask() == nil || ev.GetTask().GetInstance() != req.GetInstance()):
		case len(resp.Events) == limit:
			resp.More = true
		default:
			resp.Events = append(resp.Events, ev)
		}
	}
	return resp, nil
}

type fakeHostService struct {
	pelotonv1.UnimplementedHostServiceServer
	f *fakeServer
}

func (s fakeHostService) ListHosts(_ context.Context, req *pelotonv1.ListHostsRequest) (*pelotonv1.ListHostsResponse, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	resp := &pelotonv1.ListHostsResponse{}
	for _, h := range s.f.hosts {
		resp.Hosts = append(resp.Hosts, proto.Clone(h).(*pelotonv1.Host))
	}
	return resp, nil
}

func (s fakeHostService) find(id string) (*pelotonv1.Host, error) {
	for _, h := range s.f.hosts {
		if h.GetId() == id {
			return h, nil
		}
	}
	if !strings.Contains(id, "/") {
		return nil, status.Errorf(codes.InvalidArgument, "host_id: %q: want <cluster>/<name>", id)
	}
	return nil, status.Errorf(codes.NotFound, "host %s not found in any region", id)
}

func (s fakeHostService) DrainHost(_ context.Context, req *pelotonv1.DrainHostRequest) (*pelotonv1.DrainHostResponse, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	h, err := s.find(req.GetHostId())
	if err != nil {
		return nil, err
	}
	h.Draining, h.DrainReason, h.DrainTime = true, req.GetReason(), timestamppb.Now()
	h.State = pelotonv1.HostState_HOST_STATE_DRAINING
	return &pelotonv1.DrainHostResponse{Host: proto.Clone(h).(*pelotonv1.Host)}, nil
}

func (s fakeHostService) UndrainHost(_ context.Context, req *pelotonv1.UndrainHostRequest) (*pelotonv1.UndrainHostResponse, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	h, err := s.find(req.GetHostId())
	if err != nil {
		return nil, err
	}
	h.Draining, h.DrainReason, h.DrainTime = false, "", nil
	h.State = pelotonv1.HostState_HOST_STATE_UP
	return &pelotonv1.UndrainHostResponse{Host: proto.Clone(h).(*pelotonv1.Host)}, nil
}
