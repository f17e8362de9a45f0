package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
	"github.com/peloton-federated/peloton/shard/store"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Server implements every v1 service for one shard: it is the services,
// each a type of its own over the shard's API state (api), composed.
type Server struct {
	jobService
	taskService
	poolService
	hostService
	regionService
	eventService
	systemService
	api *api
}

// api is what the services share: the shard's engine, the build, the pool
// history, the backups and who called; its methods are the helpers the
// services share.
type api struct {
	engine  *jobmgr.Engine
	version string
	commit  string
	// history is the region's pool history (nil: none kept).
	history *PoolHistory
	// backups serves BackupStore (nil: refused).
	backups *Backups
	// callerOf names a call's caller, as the gateway authenticated it
	// ("" when it does not know).
	callerOf func(context.Context) string
}

// The services, one per v1 service.
type (
	jobService struct {
		pb.UnimplementedJobServiceServer
		*api
	}
	taskService struct {
		pb.UnimplementedTaskServiceServer
		*api
	}
	poolService struct {
		pb.UnimplementedPoolServiceServer
		*api
	}
	hostService struct {
		pb.UnimplementedHostServiceServer
		*api
	}
	regionService struct {
		pb.UnimplementedRegionServiceServer
		*api
	}
	eventService struct {
		pb.UnimplementedEventServiceServer
		*api
	}
	systemService struct {
		pb.UnimplementedSystemServiceServer
		*api
	}
)

// New returns the API of the shard run by engine.
func New(engine *jobmgr.Engine, version, commit string) *Server {
	a := &api{engine: engine, version: version, commit: commit}
	return &Server{
		jobService: jobService{api: a}, taskService: taskService{api: a}, poolService: poolService{api: a},
		hostService: hostService{api: a}, regionService: regionService{api: a}, eventService: eventService{api: a},
		systemService: systemService{api: a}, api: a,
	}
}

// WithCaller has the server name a call's caller with callerOf (the
// gateway's identities; the shard does not import it).
func (s *Server) WithCaller(callerOf func(context.Context) string) *Server {
	s.api.callerOf = callerOf
	return s
}

// caller names the caller of a call, "an unknown caller" when unknown.
func (s *api) caller(ctx context.Context) string {
	if s.callerOf != nil {
		if who := s.callerOf(ctx); who != "" {
			return who
		}
	}
	return "an unknown caller"
}

// WithHistory has the server answer GetPoolHistory from h.
func (s *Server) WithHistory(h *PoolHistory) *Server {
	s.api.history = h
	return s
}

// Register adds every service to a gRPC server.
func (s *Server) Register(g *grpc.Server) {
	pb.RegisterJobServiceServer(g, s)
	pb.RegisterTaskServiceServer(g, s)
	pb.RegisterPoolServiceServer(g, s)
	pb.RegisterHostServiceServer(g, s)
	pb.RegisterRegionServiceServer(g, s)
	pb.RegisterEventServiceServer(g, s)
	pb.RegisterSystemServiceServer(g, s)
}

// errStopped is a call's change cancelled by the engine, not by its
// caller: the member stopped leading the region (or is shutting down)
// while the change was being stored.
var errStopped = errors.New("this member stopped leading the region while the change was stored")

// stoppedUnder marks a cancellation that ctx, the caller's context, did
// not make as errStopped: whether the change was stored is not known.
func stoppedUnder(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return fmt.Errorf("%w: %w", errStopped, err)
	}
	return err
}

// toStatus maps domain errors to gRPC codes, the one place that does so.
func toStatus(err error) error {
	var specErr *pb.SpecError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &specErr):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, jobmgr.ErrNotFound), errors.Is(err, store.ErrNotFound), errors.Is(err, hostmgr.ErrUnknownRun):
		return status.Error(codes.NotFound, err.Error())
	case errors.As(err, new(entitlement.ValidationErrors)), errors.Is(err, entitlement.ErrInvalidPool):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, jobmgr.ErrPoolExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, jobmgr.ErrPoolConflict), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrExists):
		// A concurrent change won (two updates of one job, say): retry.
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, jobmgr.ErrNotTerminal), errors.Is(err, jobmgr.ErrNoLogs), errors.Is(err, jobmgr.ErrJobFinished), errors.Is(err, jobmgr.ErrUpdateEnded), errors.Is(err, jobmgr.ErrSLA),
		errors.Is(err, jobmgr.ErrPoolInUse), errors.Is(err, jobmgr.ErrRootPool), errors.Is(err, jobmgr.ErrNotLeafPool),
		errors.Is(err, jobmgr.ErrMigrationConflict), errors.Is(err, jobmgr.ErrMigrationEnded), errors.Is(err, jobmgr.ErrNoCapacity),
		errors.Is(err, jobmgr.ErrClusterDrained):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, jobmgr.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, jobmgr.ErrUnknownCluster):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, jobmgr.ErrPoolFull):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, jobmgr.ErrEventsGone):
		return status.Error(codes.OutOfRange, err.Error())
	case errors.Is(err, store.ErrUnavailable):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, store.ErrFenced):
		// Another member leads the region now: the caller retries there.
		return status.Error(codes.Unavailable, "this member no longer leads the region: "+err.Error())
	case errors.Is(err, errStopped):
		// The caller retries where the region is led now; a create with
		// a request id finds what this one stored, if anything.
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, jobmgr.ErrNotStored):
		// The change is held and written again by a later pass.
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func invalid(path, msg string) error {
	return toStatus(pb.NewSpecError([]pb.FieldError{{Path: path, Message: msg}}))
}

func requireID(path, id string) error {
	if strings.TrimSpace(id) == "" {
		return invalid(path, "required")
	}
	return nil
}

// checkJobSpec validates a job spec as received, with defaults applied to
// it, and checks its region and pool against this shard.
func (s *api) checkJobSpec(spec *pb.JobSpec) error {
	return toStatus(s.specError(spec))
}

// specError is checkJobSpec's finding as a domain error: nil, or a
// *pb.SpecError naming every field at fault.
func (s *api) specError(spec *pb.JobSpec) error {
	if spec == nil {
		return pb.NewSpecError([]pb.FieldError{{Path: "spec", Message: "required"}})
	}
	problems := pb.UnknownFieldProblems(spec)
	pb.ApplyJobSpecDefaults(spec)
	problems = append(problems, pb.ValidateJobSpec(spec)...)
	if ps := scheduleProblems(spec); len(ps) > 0 {
		problems = append(problems, ps...)
		pb.SortFieldErrors(problems)
	}
	if len(problems) > 0 {
		return pb.NewSpecError(problems)
	}
	field := func(path, msg string) error { return pb.NewSpecError([]pb.FieldError{{Path: path, Message: msg}}) }
	if spec.Region != "" && spec.Region != s.engine.Region() {
		return field("region", fmt.Sprintf("unknown region %q (this federation has %q)", spec.Region, s.engine.Region()))
	}
	if err := s.engine.Reads().CheckJobPool(spec.Pool); err != nil {
		return field("pool", err.Error())
	}
	if limit := s.engine.Limits().InstancesPerJob; spec.Type != pb.JobType_JOB_TYPE_DAEMON && spec.Instances > limit {
		return field("instances", fmt.Sprintf("%d is more than this region's limit of %d per job", spec.Instances, limit))
	}
	return s.fitProblems(spec)
}

func (s *jobService) CreateJob(ctx context.Context, req *pb.CreateJobRequest) (*pb.CreateJobResponse, error) {
	if p := pb.CheckRequestID(req.RequestId); p != "" {
		return nil, invalid("request_id", p)
	}
	var id model.JobID
	if req.RequestId != "" && req.Spec != nil {
		// Derived from the spec as sent, before defaults fill it in.
		id = model.JobID(pb.RequestJobID(req.RequestId, 0, req.Spec))
	}
	if err := s.checkJobSpec(req.Spec); err != nil {
		return nil, err
	}
	created, err := jobmgr.Do(ctx, s.engine, jobmgr.CreateJobs{Jobs: []jobmgr.NewJob{{ID: id, Spec: specToModel(req.Spec)}}})
	if err != nil {
		return nil, toStatus(stoppedUnder(ctx, err))
	}
	c := created[0]
	if c.Err != nil {
		return nil, toStatus(stoppedUnder(ctx, c.Err))
	}
	j := c.Job
	if c.Existing {
		var err error
		if j, err = s.engine.Reads().GetJob(c.ID); err != nil {
			return nil, toStatus(err)
		}
	}
	return &pb.CreateJobResponse{Job: jobToProto(j)}, nil
}

// CreateJobs checks every spec on its own and creates those that pass in
// one call of the engine; each result says what became of its spec.
func (s *jobService) CreateJobs(ctx context.Context, req *pb.CreateJobsRequest) (*pb.CreateJobsResponse, error) {
	n := len(req.Jobs)
	if limit := s.engine.Limits().JobsPerRequest; n > limit {
		return nil, invalid("jobs", fmt.Sprintf("has %d specs, more than this region's limit of %d per request", n, limit))
	}
	if p := pb.CheckRequestID(req.RequestId); p != "" {
		return nil, invalid("request_id", p)
	}
	positions, p := req.SpecPositions()
	if p != "" {
		return nil, invalid("positions", p)
	}
	results := make([]*pb.CreateJobsResult, n)
	todo := make([]jobmgr.NewJob, 0, n)
	at := make([]int, 0, n)
	for i, spec := range req.Jobs {
		var id model.JobID
		if req.RequestId != "" && spec != nil {
			id = model.JobID(pb.RequestJobID(req.RequestId, positions[i], spec))
		}
		if err := s.specError(spec); err != nil {
			results[i] = itemResult(positions[i], err)
			continue
		}
		todo = append(todo, jobmgr.NewJob{ID: id, Spec: specToModel(spec)})
		at = append(at, i)
	}
	created, err := jobmgr.Do(ctx, s.engine, jobmgr.CreateJobs{Jobs: todo})
	if err != nil {
		return nil, toStatus(stoppedUnder(ctx, err))
	}
	for k, c := range created {
		i := at[k]
		if c.Err != nil {
			results[i] = itemResult(positions[i], stoppedUnder(ctx, c.Err))
			continue
		}
		results[i] = &pb.CreateJobsResult{JobId: string(c.ID), Region: s.engine.Region(), Existing: c.Existing}
	}
	return &pb.CreateJobsResponse{Results: results}, nil
}

// itemResult is the result of a refused spec: its code, and its problems
// with paths under jobs[position].
func itemResult(position uint32, err error) *pb.CreateJobsResult {
	var se *pb.SpecError
	if errors.As(err, &se) {
		problems := make([]pb.FieldError, len(se.Problems))
		for j, p := range se.Problems {
			problems[j] = pb.FieldError{Path: pb.JobPath(position, p.Path), Message: p.Message}
		}
		err = pb.NewSpecError(problems)
	}
	st := status.Convert(toStatus(err))
	msg := st.Message()
	if se == nil {
		msg = pb.JobPath(position, "") + ": " + msg
	}
	return &pb.CreateJobsResult{Code: int32(st.Code()), Message: msg}
}

func (s *jobService) GetJob(ctx context.Context, req *pb.GetJobRequest) (*pb.GetJobResponse, error) {
	if err := requireID("id", req.Id); err != nil {
		return nil, err
	}
	j, err := s.engine.Reads().GetJob(model.JobID(req.Id))
	if err != nil {
		return nil, toStatus(err)
	}
	out := jobToProto(j)
	if out.Status.Periodic != nil {
		out.Status.Periodic.ActiveRuns = uint32(s.engine.Reads().ActiveRuns(j.ID))
	}
	// Why its tasks wait is read, never stored; a job that just went is
	// shown without it.
	if groups, err := s.engine.Reads().Waiting(j.ID); err == nil {
		for _, g := range groups {
			out.Status.Waiting = append(out.Status.Waiting, &pb.WaitingTasks{Tasks: g.Tasks, Reason: g.Reason})
		}
	}
	return &pb.GetJobResponse{Job: out}, nil
}

func (s *jobService) ListJobs(ctx context.Context, req *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	f := jobmgr.JobFilter{Pool: req.Pool, Name: req.Name, RunOf: model.JobID(req.RunOf)}
	for _, st := range req.States {
		f.States = append(f.States, model.JobState(st))
	}
	switch req.Order {
	case pb.JobOrder_JOB_ORDER_UNSPECIFIED, pb.JobOrder_JOB_ORDER_OLDEST_FIRST, pb.JobOrder_JOB_ORDER_NEWEST_FIRST:
	default:
		return nil, invalid("order", fmt.Sprintf("unknown value %d", req.Order))
	}
	if len(req.Search) > pb.MaxJobSearch {
		return nil, invalid("search", fmt.Sprintf("%d bytes, at most %d", len(req.Search), pb.MaxJobSearch))
	}
	after, ok, err := pb.ParseJobPageTokenFor(req.PageToken, req.Order)
	if err != nil {
		return nil, invalid("page_token", err.Error())
	}
	if f.Labels, err = pb.LabelFilter(req.Labels); err != nil {
		return nil, invalid("", err.Error())
	}
	if req.Owner != "" {
		f.Labels[pb.OwnerLabel] = &req.Owner
	}
	switch req.View {
	case pb.JobView_JOB_VIEW_UNSPECIFIED, pb.JobView_JOB_VIEW_SUMMARY, pb.JobView_JOB_VIEW_FULL:
	default:
		return nil, invalid("view", fmt.Sprintf("unknown value %d", req.View))
	}
	size := pb.JobPageSize(req.Limit)
	out := &pb.ListJobsResponse{}
	// The engine pages in either order from the token's job; one more
	// than the page tells whether another page follows.
	if ok {
		f.After = &jobmgr.JobKey{Created: after.Created, ID: model.JobID(after.ID)}
	}
	f.Limit, f.Newest = size+1, req.Order == pb.JobOrder_JOB_ORDER_NEWEST_FIRST
	if search := req.Search; search != "" {
		f.Match = func(j *model.Job) bool { return pb.MatchesSearch(string(j.ID), j.Spec.Name, search) }
	}
	var total int
	if req.CountTotal {
		f.Total = &total
		f.Tasks = map[model.TaskState]uint64{}
	}
	jobs := s.engine.Reads().ListJobs(f)
	if req.CountTotal {
		out.Total = uint32(min(total, math.MaxUint32))
		out.TaskStates = make(map[string]uint32, len(f.Tasks))
		for st, n := range f.Tasks {
			out.TaskStates[st.String()] = uint32(min(n, math.MaxUint32))
		}
	}
	if len(jobs) > size {
		jobs = jobs[:size]
		last := jobs[size-1]
		out.NextPageToken = pb.JobKey{Created: last.Status.CreateTime, ID: string(last.ID)}.TokenFor(req.Order)
	}
	out.Jobs = make([]*pb.Job, len(jobs))
	for i, j := range jobs {
		if req.View != pb.JobView_JOB_VIEW_FULL {
			j = summaryOf(j)
		}
		out.Jobs[i] = jobToProto(j)
		if req.View != pb.JobView_JOB_VIEW_FULL {
			out.Jobs[i].Spec.Task, out.Jobs[i].Spec.Overrides = nil, nil
		}
	}
	return out, nil
}

// summaryOf is a job without the bulky parts of its spec (task,
// overrides), which listings leave out.
func summaryOf(j *model.Job) *model.Job {
	cp := *j
	cp.Spec.Task, cp.Spec.Overrides = model.TaskSpec{}, nil
	return &cp
}

func (s *jobService) SuspendJob(ctx context.Context, req *pb.SuspendJobRequest) (*pb.SuspendJobResponse, error) {
	if err := requireID("id", req.Id); err != nil {
		return nil, err
	}
	j, err := jobmgr.Do(ctx, s.engine, jobmgr.SuspendJob{ID: model.JobID(req.Id)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.SuspendJobResponse{Job: jobToProto(j)}, nil
}

func (s *jobService) ResumeJob(ctx context.Context, req *pb.ResumeJobRequest) (*pb.ResumeJobResponse, error) {
	if err := requireID("id", req.Id); err != nil {
		return nil, err
	}
	j, err := jobmgr.Do(ctx, s.engine, jobmgr.ResumeJob{ID: model.JobID(req.Id)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ResumeJobResponse{Job: jobToProto(j)}, nil
}

func (s *jobService) RunJob(ctx context.Context, req *pb.RunJobRequest) (*pb.RunJobResponse, error) {
	if err := requireID("id", req.Id); err != nil {
		return nil, err
	}
	j, err := jobmgr.Do(ctx, s.engine, jobmgr.RunJob{ID: model.JobID(req.Id)})
	if err != nil {
		return nil, toStatus(stoppedUnder(ctx, err))
	}
	return &pb.RunJobResponse{Run: jobToProto(j)}, nil
}

func (s *jobService) StopJob(ctx context.Context, req *pb.StopJobRequest) (*pb.StopJobResponse, error) {
	if err := requireID("id", req.Id); err != nil {
		return nil, err
	}
	j, err := jobmgr.Do(ctx, s.engine, jobmgr.StopJob{ID: model.JobID(req.Id)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.StopJobResponse{Job: jobToProto(j)}, nil
}

func (s *jobService) DeleteJob(ctx context.Context, req *pb.DeleteJobRequest) (*pb.DeleteJobResponse, error) {
	if err := requireID("id", req.Id); err != nil {
		return nil, err
	}
	if _, err := jobmgr.Do(ctx, s.engine, jobmgr.DeleteJob{ID: model.JobID(req.Id)}); err != nil {
		return nil, toStatus(err)
	}
	return &pb.DeleteJobResponse{}, nil
}

func (s *taskService) ListTasks(ctx context.Context, req *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	var states []model.TaskState
	for _, st := range req.States {
		states = append(states, model.TaskState(st))
	}
	ts, err := s.engine.Reads().ListTasks(model.JobID(req.JobId), states)
	if err != nil {
		return nil, toStatus(err)
	}
	page := pageOf(ts, req.Offset, req.Limit)
	return &pb.ListTasksResponse{Tasks: tasksToProto(page), Total: uint32(len(ts))}, nil
}

func (s *taskService) GetTask(ctx context.Context, req *pb.GetTaskRequest) (*pb.GetTaskResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	t, err := s.engine.Reads().GetTask(model.TaskID{Job: model.JobID(req.JobId), Instance: req.Instance})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetTaskResponse{Task: taskToProto(t)}, nil
}

func (s *taskService) GetTaskLogs(ctx context.Context, req *pb.GetTaskLogsRequest) (*pb.GetTaskLogsResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	stream := req.Stream
	if stream == "" {
		stream = "stdout"
	}
	if stream != "stdout" && stream != "stderr" {
		return nil, invalid("stream", fmt.Sprintf("must be stdout or stderr, not %q", req.Stream))
	}
	if req.Limit < 0 {
		return nil, invalid("limit", "must be >= 0")
	}
	data, next, size, err := s.engine.Reads().ReadLog(ctx, model.TaskID{Job: model.JobID(req.JobId), Instance: req.Instance}, req.Run, stream, req.Offset, req.Limit)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetTaskLogsResponse{Data: data, NextOffset: next, Size: size}, nil
}

func (s *taskService) StopTasks(ctx context.Context, req *pb.StopTasksRequest) (*pb.StopTasksResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	ts, err := jobmgr.Do(ctx, s.engine, jobmgr.StopTasks{Job: model.JobID(req.JobId), Instances: req.Instances, Force: req.Force})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.StopTasksResponse{Tasks: tasksToProto(ts)}, nil
}

func (s *taskService) RestartTasks(ctx context.Context, req *pb.RestartTasksRequest) (*pb.RestartTasksResponse, error) {
	if err := requireID("job_id", req.JobId); err != nil {
		return nil, err
	}
	ts, err := jobmgr.Do(ctx, s.engine, jobmgr.RestartTasks{Job: model.JobID(req.JobId), Instances: req.Instances, Force: req.Force})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.RestartTasksResponse{Tasks: tasksToProto(ts)}, nil
}

func (s *regionService) ListRegions(ctx context.Context, req *pb.ListRegionsRequest) (*pb.ListRegionsResponse, error) {
	capacity, allocated := s.engine.Hosts().Capacity()
	region := &pb.Region{
		Name:       s.engine.Region(),
		Health:     "alive",
		Members:    []*pb.RegionMember{{Name: s.engine.Region() + "-0", Role: "shard", Leader: true, Status: "alive"}},
		Capacity:   resourcesToProto(capacity),
		Allocation: resourcesToProto(allocated),
	}
	if req.GetHostLabels() {
		labels := s.engine.Hosts().Labels()
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			region.HostLabels = append(region.HostLabels, &pb.HostLabelValues{Key: k, Values: labels[k]})
		}
	}
	return &pb.ListRegionsResponse{Regions: []*pb.Region{region}}, nil
}

func (s *systemService) GetVersion(ctx context.Context, req *pb.GetVersionRequest) (*pb.GetVersionResponse, error) {
	return &pb.GetVersionResponse{Version: s.version, Commit: s.commit, Region: s.engine.Region()}, nil
}

func (s *eventService) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.Event]) error {
	if req.JobId != "" {
		if _, err := s.engine.Reads().GetJob(model.JobID(req.JobId)); err != nil {
			return toStatus(err)
		}
	}
	sub, backlog, err := s.engine.Reads().Watch(model.JobID(req.JobId), req.AfterSeq)
	if err != nil {
		return toStatus(err)
	}
	defer sub.Cancel()
	// Headers go out now, not with the first event, so that an HTTP
	// client of the gateway sees at once that it is watching.
	_ = stream.SendHeader(metadata.MD{})
	send := func(ev jobmgr.Event) error { return stream.Send(eventToProto(model.Event(ev))) }
	var last uint64 = req.AfterSeq
	for _, ev := range backlog {
		if err := send(ev); err != nil {
			return err
		}
		last = ev.Seq
	}
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case ev, ok := <-sub.C:
			if !ok {
				return status.Errorf(codes.ResourceExhausted, "watcher fell behind; resume with after_seq=%d", last)
			}
			if ev.Seq <= last {
				continue
			}
			if err := send(ev); err != nil {
				return err
			}
			last = ev.Seq
		}
	}
}

// pageOf is the page of items that skips offset of them and holds at most
// limit (0: all the rest).
func pageOf[T any](items []T, offset, limit uint32) []T {
	if int64(offset) >= int64(len(items)) {
		return nil
	}
	items = items[offset:]
	if limit > 0 && int64(limit) < int64(len(items)) {
		items = items[:limit]
	}
	return items
}
