package cli

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// fakeServer is an in-memory twin of a Peloton gateway, just enough for the
// client commands. A job's fate comes from its label "outcome": succeeded
// (default), failed or never (stays running). With a healthy event stream
// the job advances as Watch reports it; with watchBroken, Watch fails and
// every GetJob advances the job one step, so only polling can finish it.
type fakeServer struct {
	addr string

	mu          sync.Mutex
	jobs        map[string]*fakeJob
	nextID      int
	createCalls int
	watchBroken bool
	tasks       map[string][]*pelotonv1.Task
	logs        map[fakeLogKey][]byte
	// logChunk caps each GetTaskLogs answer, so clients must loop.
	logChunk int
	// growing: each GetTask of this task appends a log line; after
	// growSteps calls the task succeeds.
	growing   *fakeLogKey
	growSteps int
	growCalls int
	// configs are each job's specs by version (1 first); updates by id.
	configs map[string][]*pelotonv1.JobSpec
	updates map[string]*pelotonv1.Update
	events  map[string][]*pelotonv1.Event
	hosts   []*pelotonv1.Host
	// shed: the next calls refused as an overloaded server refuses them;
	// unavailable: the next calls refused as if the server were down.
	shed, unavailable int
	listCalls         int
	// batches are the CreateJobs requests received; byRequest the job
	// each (request id, position) created; itemsDown, the next specs a
	// CreateJobs refuses as unavailable.
	batches   []*pelotonv1.CreateJobsRequest
	byRequest map[string]string
	itemsDown int
}

// refuse answers the calls that shed and unavailable say to refuse.
func (f *fakeServer) refuse(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	f.mu.Lock()
	shed, down := f.shed > 0, f.unavailable > 0
	if shed {
		f.shed--
	} else if down {
		f.unavailable--
	}
	f.mu.Unlock()
	switch {
	case shed:
		st, _ := status.New(codes.ResourceExhausted, "busy").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(5 * time.Millisecond)})
		return nil, st.Err()
	case down:
		return nil, status.Error(codes.Unavailable, "down")
	}
	return handler(ctx, req)
}

type fakeLogKey struct {
	job      string
	instance uint32
	stream   string
}

type fakeJob struct {
	job   *pelotonv1.Job
	steps []pelotonv1.JobState
}

func startFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{
		jobs:     map[string]*fakeJob{},
		tasks:    map[string][]*pelotonv1.Task{},
		logs:     map[fakeLogKey][]byte{},
		logChunk: 7,
		configs:  map[string][]*pelotonv1.JobSpec{},
		updates:  map[string]*pelotonv1.Update{},
		events:   map[string][]*pelotonv1.Event{},
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(f.refuse))
	pelotonv1.RegisterJobServiceServer(gs, fakeJobService{f: f})
	pelotonv1.RegisterTaskServiceServer(gs, fakeTaskService{f: f})
	pelotonv1.RegisterEventServiceServer(gs, fakeEventService{f: f})
	pelotonv1.RegisterPoolServiceServer(gs, fakePoolService{})
	pelotonv1.RegisterSystemServiceServer(gs, fakeSystemService{})
	pelotonv1.RegisterHostServiceServer(gs, fakeHostService{f: f})
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	f.addr = lis.Addr().String()
	return f
}

// addJob stores a job directly, as if created earlier.
func (f *fakeServer) addJob(name string, state pelotonv1.JobState) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	id := fmt.Sprintf("job-%d", f.nextID)
	f.jobs[id] = &fakeJob{job: &pelotonv1.Job{
		Id: id,
		Spec: &pelotonv1.JobSpec{Name: name, Instances: 1, Pool: "/", Task: &pelotonv1.TaskSpec{
			Command: "echo", Resources: &pelotonv1.Resources{Cpu: 1, MemMb: 64},
		}},
		Status:        &pelotonv1.JobStatus{State: state, CreateTime: timestamppb.Now()},
		ConfigVersion: 1,
	}}
	f.configs[id] = []*pelotonv1.JobSpec{proto.Clone(f.jobs[id].job.Spec).(*pelotonv1.JobSpec)}
	return id
}

func (f *fakeServer) creates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.createCalls
}

// advance moves a job to its next state; callers hold mu.
func (j *fakeJob) advance() bool {
	if len(j.steps) == 0 {
		return false
	}
	state := j.steps[0]
	j.steps = j.steps[1:]
	n := j.job.GetSpec().GetInstances()
	counts := map[string]uint32{}
	switch state {
	case pelotonv1.JobState_JOB_STATE_PENDING:
		counts["TASK_STATE_PENDING"] = n
	case pelotonv1.JobState_JOB_STATE_RUNNING:
		counts["TASK_STATE_RUNNING"] = n
	case pelotonv1.JobState_JOB_STATE_SUCCEEDED:
		counts["TASK_STATE_SUCCEEDED"] = n
	case pelotonv1.JobState_JOB_STATE_FAILED:
		counts["TASK_STATE_FAILED"] = 1
		if n > 1 {
			counts["TASK_STATE_SUCCEEDED"] = n - 1
		}
		j.job.Status.Message = "instance 0 exited with code 3"
	}
	j.job.Status.State = state
	j.job.Status.TaskStates = counts
	return true
}

type fakeJobService struct {
	pelotonv1.UnimplementedJobServiceServer
	f *fakeServer
}

func (s fakeJobService) CreateJob(_ context.Context, req *pelotonv1.CreateJobRequest) (*pelotonv1.CreateJobResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.createCalls++
	problems := append(pelotonv1.UnknownFieldProblems(req), pelotonv1.ValidateJobSpec(req.GetSpec())...)
	if err := pelotonv1.NewSpecError(problems); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	spec := proto.Clone(req.GetSpec()).(*pelotonv1.JobSpec)
	pelotonv1.ApplyJobSpecDefaults(spec)
	if spec.GetLabels()["outcome"] == "reject" {
		return nil, status.Error(codes.InvalidArgument, "pool: has no quota for this job\npriority: above the pool's maximum")
	}
	if spec.GetPool() != "/" {
		return nil, status.Errorf(codes.NotFound, "pool %s not found", spec.GetPool())
	}
	f.nextID++
	id := fmt.Sprintf("job-%d", f.nextID)
	steps := []pelotonv1.JobState{pelotonv1.JobState_JOB_STATE_PENDING, pelotonv1.JobState_JOB_STATE_RUNNING}
	switch spec.GetLabels()["outcome"] {
	case "failed":
		steps = append(steps, pelotonv1.JobState_JOB_STATE_FAILED)
	case "never":
	default:
		steps = append(steps, pelotonv1.JobState_JOB_STATE_SUCCEEDED)
	}
	j := &fakeJob{steps: steps, job: &pelotonv1.Job{Id: id, Spec: spec, ConfigVersion: 1, Status: &pelotonv1.JobStatus{
		State: pelotonv1.JobState_JOB_STATE_INITIALIZED, CreateTime: timestamppb.Now(),
	}}}
	f.jobs[id] = j
	f.configs[id] = []*pelotonv1.JobSpec{proto.Clone(spec).(*pelotonv1.JobSpec)}
	return &pelotonv1.CreateJobResponse{Job: proto.Clone(j.job).(*pelotonv1.Job)}, nil
}

// CreateJobs creates a job per spec as CreateJob does, refusing specs on
// their own; a request id makes it idempotent.
func (s fakeJobService) CreateJobs(ctx context.Context, req *pelotonv1.CreateJobsRequest) (*pelotonv1.CreateJobsResponse, error) {
	f := s.f
	f.mu.Lock()
	f.batches = append(f.batches, req)
	if f.byRequest == nil {
		f.byRequest = map[string]string{}
	}
	f.mu.Unlock()
	out := &pelotonv1.CreateJobsResponse{}
	for i, spec := range req.GetJobs() {
		key := fmt.Sprintf("%s/%d", req.GetRequestId(), i)
		f.mu.Lock()
		id, done := f.byRequest[key]
		down := f.itemsDown > 0
		if down {
			f.itemsDown--
		}
		f.mu.Unlock()
		switch {
		case done:
			out.Results = append(out.Results, &pelotonv1.CreateJobsResult{JobId: id, Existing: true})
			continue
		case down:
			out.Results = append(out.Results, &pelotonv1.CreateJobsResult{Code: int32(codes.Unavailable), Message: fmt.Sprintf("jobs[%d]: store unavailable", i)})
			continue
		}
		resp, err := s.CreateJob(ctx, &pelotonv1.CreateJobRequest{Spec: spec})
		if err != nil {
			st := status.Convert(err)
			msg := strings.ReplaceAll(st.Message(), "\n", fmt.Sprintf("\njobs[%d].", i))
			out.Results = append(out.Results, &pelotonv1.CreateJobsResult{Code: int32(st.Code()), Message: fmt.Sprintf("jobs[%d].%s", i, msg)})
			continue
		}
		f.mu.Lock()
		f.byRequest[key] = resp.GetJob().GetId()
		f.mu.Unlock()
		out.Results = append(out.Results, &pelotonv1.CreateJobsResult{JobId: resp.GetJob().GetId(), Region: "local"})
	}
	return out, nil
}

func (s fakeJobService) GetJob(_ context.Context, req *pelotonv1.GetJobRequest) (*pelotonv1.GetJobResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[req.GetId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetId())
	}
	if f.watchBroken {
		j.advance()
	}
	return &pelotonv1.GetJobResponse{Job: proto.Clone(j.job).(*pelotonv1.Job)}, nil
}

func (s fakeJobService) ListJobs(_ context.Context, req *pelotonv1.ListJobsRequest) (*pelotonv1.ListJobsResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	after, paged, err := pelotonv1.ParseJobPageToken(req.GetPageToken())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	f.listCalls++
	resp := &pelotonv1.ListJobsResponse{}
	for _, j := range f.jobs {
		if paged && pelotonv1.KeyOf(j.job).Compare(after) <= 0 {
			continue
		}
		if len(req.GetStates()) == 0 || slices.Contains(req.GetStates(), j.job.GetStatus().GetState()) {
			resp.Jobs = append(resp.Jobs, proto.Clone(j.job).(*pelotonv1.Job))
		}
	}
	// Pages of at most fakePageSize jobs, so that clients must page.
	limit := uint32(min(pelotonv1.JobPageSize(req.GetLimit()), fakePageSize))
	resp.Jobs, resp.NextPageToken = pelotonv1.MergeJobPage(resp.Jobs, limit, false)
	return resp, nil
}

const fakePageSize = 3

func (s fakeJobService) StopJob(_ context.Context, req *pelotonv1.StopJobRequest) (*pelotonv1.StopJobResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[req.GetId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetId())
	}
	j.steps = nil
	if !jobEnded(j.job.GetStatus().GetState()) {
		j.job.Status.State = pelotonv1.JobState_JOB_STATE_KILLING
		j.steps = []pelotonv1.JobState{pelotonv1.JobState_JOB_STATE_KILLED}
	}
	return &pelotonv1.StopJobResponse{Job: proto.Clone(j.job).(*pelotonv1.Job)}, nil
}

func (s fakeJobService) DeleteJob(_ context.Context, req *pelotonv1.DeleteJobRequest) (*pelotonv1.DeleteJobResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[req.GetId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetId())
	}
	if !jobEnded(j.job.GetStatus().GetState()) {
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is %s; stop it first", req.GetId(), shortState(j.job.GetStatus().GetState()))
	}
	delete(f.jobs, req.GetId())
	return &pelotonv1.DeleteJobResponse{}, nil
}

type fakeEventService struct {
	pelotonv1.UnimplementedEventServiceServer
	f *fakeServer
}

func (s fakeEventService) Watch(req *pelotonv1.WatchRequest, stream grpc.ServerStreamingServer[pelotonv1.Event]) error {
	f := s.f
	f.mu.Lock()
	if f.watchBroken {
		f.mu.Unlock()
		return status.Error(codes.Unimplemented, "watch is not available")
	}
	var events []*pelotonv1.Event
	seq := uint64(0)
	if j, ok := f.jobs[req.GetJobId()]; ok {
		for j.advance() {
			seq++
			events = append(events,
				&pelotonv1.Event{Seq: seq, JobId: j.job.GetId(), Kind: &pelotonv1.Event_Task{Task: &pelotonv1.Task{JobId: j.job.GetId()}}},
				&pelotonv1.Event{Seq: seq, JobId: j.job.GetId(), Kind: &pelotonv1.Event_Job{Job: proto.Clone(j.job.GetStatus()).(*pelotonv1.JobStatus)}})
		}
	}
	f.mu.Unlock()
	for _, ev := range events {
		if err := stream.Send(ev); err != nil {
			return err
		}
	}
	<-stream.Context().Done()
	return nil
}

type fakeTaskService struct {
	pelotonv1.UnimplementedTaskServiceServer
	f *fakeServer
}

func (s fakeTaskService) find(job string, instance uint32) (*pelotonv1.Task, error) {
	for _, t := range s.f.tasks[job] {
		if t.GetInstance() == instance {
			return t, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "task %s/%d not found", job, instance)
}

func (s fakeTaskService) ListTasks(_ context.Context, req *pelotonv1.ListTasksRequest) (*pelotonv1.ListTasksResponse, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	resp := &pelotonv1.ListTasksResponse{}
	for _, t := range s.f.tasks[req.GetJobId()] {
		if len(req.GetStates()) == 0 || slices.Contains(req.GetStates(), t.GetState()) {
			resp.Tasks = append(resp.Tasks, proto.Clone(t).(*pelotonv1.Task))
		}
	}
	return resp, nil
}

func (s fakeTaskService) GetTask(_ context.Context, req *pelotonv1.GetTaskRequest) (*pelotonv1.GetTaskResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := s.find(req.GetJobId(), req.GetInstance())
	if err != nil {
		return nil, err
	}
	key := fakeLogKey{req.GetJobId(), req.GetInstance(), "stdout"}
	if f.growing != nil && *f.growing == key && f.growCalls < f.growSteps {
		f.growCalls++
		f.logs[key] = append(f.logs[key], fmt.Sprintf("line %d\n", f.growCalls)...)
		if f.growCalls == f.growSteps {
			t.State = pelotonv1.TaskState_TASK_STATE_SUCCEEDED
			t.CompletionTime = timestamppb.New(time.Now())
		}
	}
	return &pelotonv1.GetTaskResponse{Task: proto.Clone(t).(*pelotonv1.Task)}, nil
}

func (s fakeTaskService) GetTaskLogs(_ context.Context, req *pelotonv1.GetTaskLogsRequest) (*pelotonv1.GetTaskLogsResponse, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	stream := req.GetStream()
	if stream == "" {
		stream = "stdout"
	}
	data, ok := f.logs[fakeLogKey{req.GetJobId(), req.GetInstance(), stream}]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no %s log for task %s/%d", stream, req.GetJobId(), req.GetInstance())
	}
	size := int64(len(data))
	from := req.GetOffset()
	if from < 0 {
		from = max(size+from, 0)
	}
	from = min(from, size)
	limit := req.GetLimit()
	if limit <= 0 || limit > int64(f.logChunk) {
		limit = int64(f.logChunk)
	}
	to := min(from+limit, size)
	return &pelotonv1.GetTaskLogsResponse{Data: slices.Clone(data[from:to]), NextOffset: to, Size: size}, nil
}

func (s fakeTaskService) StopTasks(_ context.Context, req *pelotonv1.StopTasksRequest) (*pelotonv1.StopTasksResponse, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	resp := &pelotonv1.StopTasksResponse{}
	for _, t := range s.f.tasks[req.GetJobId()] {
		if len(req.GetInstances()) == 0 || slices.Contains(req.GetInstances(), t.GetInstance()) {
			t.GoalState = pelotonv1.TaskState_TASK_STATE_KILLED
			resp.Tasks = append(resp.Tasks, proto.Clone(t).(*pelotonv1.Task))
		}
	}
	return resp, nil
}

type fakePoolService struct {
	pelotonv1.UnimplementedPoolServiceServer
}

func (fakePoolService) ListPools(context.Context, *pelotonv1.ListPoolsRequest) (*pelotonv1.ListPoolsResponse, error) {
	res := func(cpu, mem float64) []*pelotonv1.PoolResource {
		return []*pelotonv1.PoolResource{{Name: "cpu", Allocation: cpu, Entitlement: cpu * 2}, {Name: "mem", Allocation: mem, Entitlement: mem * 2}}
	}
	return &pelotonv1.ListPoolsResponse{Pools: []*pelotonv1.Pool{
		{Path: "/maps", Resources: res(2, 2048), Jobs: 3},
		{Path: "/", Resources: res(4, 4096), Jobs: 4},
		{Path: "/maps/ingest", Resources: res(1, 512), Jobs: 2},
	}}, nil
}

type fakeSystemService struct {
	pelotonv1.UnimplementedSystemServiceServer
}

func (fakeSystemService) GetVersion(context.Context, *pelotonv1.GetVersionRequest) (*pelotonv1.GetVersionResponse, error) {
	return &pelotonv1.GetVersionResponse{Version: "v9.9.9", Commit: "abc123", Region: "east"}, nil
}
