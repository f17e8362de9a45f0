package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// APIFigures are the figures of a scenario run through a real peloton
// process's public API.
type APIFigures struct {
	// Call says what was called: "CreateJobs ×1000 (gRPC)" or "CreateJob
	// (HTTP/JSON)".
	Call    string `json:"call"`
	Clients int    `json:"clients"`
	// Jobs counts the jobs the server acknowledged; Refused the specs it
	// refused (a batch scenario's specs are all valid: must be 0).
	Jobs    int `json:"jobs"`
	Refused int `json:"refused"`
	// Running counts acknowledged jobs whose task was seen RUNNING through
	// the API, Lost the acknowledged jobs the server did not list after
	// the run. Lost must be 0, Running must be Jobs.
	Running int `json:"running"`
	Lost    int `json:"lost"`
	// Seconds is the measured span: batch, from the first request sent to
	// the last task seen RUNNING; single, the clients' sending time.
	Seconds float64 `json:"seconds"`
	// PerSec is the scenario's figure: batch, tasks RUNNING per second over
	// Seconds; single, jobs created per second.
	PerSec float64 `json:"perSec"`
	// AckedPerSec (batch) is the acknowledgement rate: jobs acknowledged
	// per second, from the first request to the last answer.
	AckedPerSec float64 `json:"ackedPerSec,omitempty"`
	// P50Ms and P99Ms: batch, a job's request sent to its task seen
	// RUNNING; single, one create call.
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	// Shed is the fraction of calls refused for load (429 /
	// ResourceExhausted); Errors counts other failures.
	Shed   float64 `json:"shed"`
	Errors int     `json:"errors"`
	// The baseline measured in the same run, and PerSec over it.
	Baseline       string  `json:"baseline"`
	BaselinePerSec float64 `json:"baselinePerSec"`
	BaselineP99Ms  float64 `json:"baselineP99Ms,omitempty"`
	Ratio          float64 `json:"ratio"`
	// The target and whether it was met.
	TargetPerSec float64 `json:"targetPerSec,omitempty"`
	TargetP99Ms  float64 `json:"targetP99Ms,omitempty"`
	Met          bool    `json:"met"`
	// ServerCPU is the server's CPU seconds over the measured span, per
	// job; RSSMiB its resident memory at the end.
	ServerCPUPerJobUs float64 `json:"serverCpuPerJobUs"`
	RSSMiB            float64 `json:"rssMiB"`
	TimedOut          bool    `json:"timedOut"`
	Err               string  `json:"error,omitempty"`
}

// Note says what a reader must know about the figures.
func (f *APIFigures) Note() string {
	var notes []string
	switch {
	case f.Err != "":
		notes = append(notes, "api error: "+f.Err)
	case f.TimedOut:
		notes = append(notes, fmt.Sprintf("api timed out: %d of %d jobs running", f.Running, f.Jobs))
	}
	if f.Lost > 0 {
		notes = append(notes, fmt.Sprintf("LOST %d acknowledged jobs", f.Lost))
	}
	if f.Refused > 0 {
		notes = append(notes, fmt.Sprintf("%d specs refused", f.Refused))
	}
	if f.Errors > 0 {
		notes = append(notes, fmt.Sprintf("%d calls failed", f.Errors))
	}
	return strings.Join(notes, "; ")
}

// apiOptions are what RunAPI needs beyond the workload.
type apiOptions struct {
	bin string
	// profileDir, when set, receives a CPU profile of the server over the
	// measured span (<scenario>-server.cpu.prof).
	profileDir string
}

// RunAPI runs an API scenario against a `peloton dev` started from bin in
// dir, then measures its baseline.
func RunAPI(ctx context.Context, s *Scenario, w *Workload, z Size, opts apiOptions, dir string) APIFigures {
	f := APIFigures{Clients: z.Clients, TargetPerSec: s.API.Target.PerSecond, TargetP99Ms: float64(time.Duration(s.API.Target.P99)) / 1e6}
	if opts.bin == "" {
		f.Err = "no peloton binary"
		return f
	}
	var extra []string
	if s.API.Call == "batch" {
		extra = append(extra, "--limit-jobs-per-request", fmt.Sprint(max(s.API.BatchSize, 1000)))
	}
	srv, err := startDevServer(ctx, opts.bin, dir, s, w, extra...)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	defer srv.stop()
	if s.API.Call == "batch" {
		runBatch(ctx, s, w, z, srv, opts, &f)
	} else {
		runSingle(ctx, s, w, z, srv, opts, &f)
	}
	f.RSSMiB = srv.rssMiB()
	if f.Err == "" && f.TargetPerSec > 0 {
		f.Met = f.PerSec >= f.TargetPerSec && (f.TargetP99Ms == 0 || f.P99Ms <= f.TargetP99Ms) &&
			f.Lost == 0 && f.Refused == 0 && !f.TimedOut
	}
	return f
}

// profileDuring starts a CPU profile of the server over d, when asked.
func profileDuring(ctx context.Context, srv *devServer, opts apiOptions, name string, d time.Duration) func() {
	if opts.profileDir == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.profile(ctx, d, filepath.Join(opts.profileDir, name+"-server.cpu.prof"))
	}()
	return func() { <-done }
}

// apiSpec is the API form of a workload's job j.
func apiSpec(w *Workload, j int, name string) *pb.JobSpec {
	m := w.JobSpec(j)
	cpu, mem, disk, gpu := m.Task.Resources.Decimal()
	spec := &pb.JobSpec{
		Name: name, Type: pb.JobType(m.Type), Pool: m.Pool, Preemptible: m.Preemptible, Priority: m.Priority,
		Instances: m.Instances, MaxAttempts: m.MaxAttempts,
		Task: &pb.TaskSpec{Command: m.Task.Command, Env: m.Task.Env,
			Resources: &pb.Resources{Cpu: cpu, MemMb: mem, DiskMb: disk, Gpu: gpu}, Constraints: apiConstraints(m.Task.Constraints)},
	}
	return spec
}

func apiConstraints(cs []model.Constraint) []*pb.Constraint {
	var out []*pb.Constraint
	for _, c := range cs {
		out = append(out, &pb.Constraint{Key: c.Key, Op: pb.ConstraintOp(c.Op), Values: c.Values,
			AllOf: apiConstraints(c.AllOf), AnyOf: apiConstraints(c.AnyOf)})
	}
	return out
}

// runningWatch follows the server's events and notes, per job, when its
// task was first seen RUNNING.
type runningWatch struct {
	mu      sync.Mutex
	start   time.Time
	running map[string]time.Duration
	want    map[string]bool // acknowledged jobs not yet seen running
	acked   int
	// all is closed once every acknowledged job ran and acks are done.
	all      chan struct{}
	closed   bool
	ackDone  bool
	lastSeen time.Duration
	resumes  int
	relists  int // watches restarted from now, the events to resume from gone
	err      error
}

func newRunningWatch(start time.Time, jobs int) *runningWatch {
	return &runningWatch{start: start, running: make(map[string]time.Duration, jobs), want: make(map[string]bool, jobs), all: make(chan struct{})}
}

// follow reads the event stream until ctx ends, resuming after a lag. When
// the server no longer holds the events to resume from (OutOfRange), it
// watches from now and reads the jobs' states once, as a client of the
// API must, so that a job that started running in the hole still counts.
func (rw *runningWatch) follow(ctx context.Context, events pb.EventServiceClient, jobs pb.JobServiceClient) {
	var after uint64
	relist := false
	for ctx.Err() == nil {
		stream, err := events.Watch(ctx, &pb.WatchRequest{AfterSeq: after})
		if err != nil {
			rw.fail(err)
			return
		}
		if relist {
			// The server sends the headers once the watch is registered:
			// what changes after the listing comes as events.
			if _, err := stream.Header(); err != nil && ctx.Err() == nil {
				rw.fail(err)
				return
			}
			if err := rw.relist(ctx, jobs); err != nil {
				if ctx.Err() == nil {
					rw.fail(err)
				}
				return
			}
			relist = false
		}
	recv:
		for {
			ev, err := stream.Recv()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				switch status.Code(err) {
				case codes.ResourceExhausted:
					rw.mu.Lock()
					rw.resumes++
					rw.mu.Unlock()
				case codes.OutOfRange:
					rw.mu.Lock()
					rw.relists++
					rw.mu.Unlock()
					after, relist = 0, true
				default:
					rw.fail(err)
					return
				}
				break recv // resume after the last event seen, or from now
			}
			after = ev.GetSeq()
			if t := ev.GetTask(); t != nil && t.GetState() == pb.TaskState_TASK_STATE_RUNNING {
				rw.seen(ev.GetJobId())
			}
		}
	}
}

// relist marks every job that has a task running or ended as seen: the
// events of the hole are gone.
func (rw *runningWatch) relist(ctx context.Context, jobs pb.JobServiceClient) error {
	all, err := pb.ListAllJobs(ctx, func(ctx context.Context, r *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
		return jobs.ListJobs(ctx, r)
	}, &pb.ListJobsRequest{})
	if err != nil {
		return fmt.Errorf("listing jobs after the event stream's hole: %w", err)
	}
	for _, j := range all {
		st := j.GetStatus().GetTaskStates()
		if st["RUNNING"]+st["SUCCEEDED"]+st["FAILED"]+st["KILLED"]+st["LOST"] > 0 {
			rw.seen(j.GetId())
		}
	}
	return nil
}

func (rw *runningWatch) fail(err error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err == nil {
		rw.err = err
	}
}

func (rw *runningWatch) seen(job string) {
	now := time.Since(rw.start)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, ok := rw.running[job]; ok {
		return
	}
	rw.running[job] = now
	rw.lastSeen = now
	delete(rw.want, job)
	rw.check()
}

// acknowledged records jobs the server acknowledged.
func (rw *runningWatch) acknowledged(ids []string) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for _, id := range ids {
		rw.acked++
		if _, ok := rw.running[id]; !ok {
			rw.want[id] = true
		}
	}
}

func (rw *runningWatch) acksDone() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.ackDone = true
	rw.check()
}

func (rw *runningWatch) check() {
	if rw.ackDone && len(rw.want) == 0 && !rw.closed {
		rw.closed = true
		close(rw.all)
	}
}

// runBatch submits the workload's jobs through CreateJobs, BatchSize per
// request, from the size's clients side by side over gRPC, and follows
// them until every task runs.
func runBatch(ctx context.Context, s *Scenario, w *Workload, z Size, srv *devServer, opts apiOptions, f *APIFigures) {
	size := s.API.BatchSize
	f.Call = fmt.Sprintf("CreateJobs ×%d (gRPC)", size)
	jobs := pb.NewJobServiceClient(srv.conn)
	br := &batchRun{scenario: w.Scenario, jobs: jobs, batches: batchSpecs(w, size), ackedAt: map[string]int{}}
	br.sentAt = make([]time.Duration, len(br.batches))
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	rw := newRunningWatch(time.Now(), len(w.Jobs))
	go rw.follow(watchCtx, pb.NewEventServiceClient(srv.conn), jobs)
	// The watch is open before the first request: give it a moment.
	time.Sleep(100 * time.Millisecond)
	br.start = time.Now()
	rw.mu.Lock()
	rw.start = br.start
	rw.mu.Unlock()
	cpu0 := srv.cpuSeconds()
	endProfile := profileDuring(ctx, srv, opts, s.Name, time.Duration(z.APIBudget))

	br.send(ctx, z.Clients, rw)
	budget := time.NewTimer(time.Duration(z.APIBudget))
	select {
	case <-rw.all:
	case <-budget.C:
		f.TimedOut = true
	case <-ctx.Done():
		f.TimedOut = true
	}
	budget.Stop()
	cpu := srv.cpuSeconds() - cpu0
	stopWatch()
	endProfile()

	br.figures(f, rw, cpu)
	// No acknowledgement lost: every acknowledged job is listed, with its
	// task running.
	listed, err := listRunning(ctx, jobs)
	if err != nil && f.Err == "" {
		f.Err = "list: " + err.Error()
	}
	for _, id := range br.acked {
		if _, ok := listed[id]; !ok {
			f.Lost++
		}
	}

	// The baseline: the store alone doing the durable work of each job,
	// in the same batches: the job created, then its task placed.
	f.Baseline = fmt.Sprintf("boltstore CreateJobs + WriteTasks ×%d", size)
	f.BaselinePerSec, err = jobStoreCeiling(ctx, w, size, filepath.Join(srv.dir, "ceiling.db"))
	if err != nil && f.Err == "" {
		f.Err = "store ceiling: " + err.Error()
	}
	if f.BaselinePerSec > 0 {
		f.Ratio = f.PerSec / f.BaselinePerSec
	}
}

// batchSpecs cuts the workload's jobs into requests of size.
func batchSpecs(w *Workload, size int) [][]*pb.JobSpec {
	var batches [][]*pb.JobSpec
	for from := 0; from < len(w.Jobs); from += size {
		var b []*pb.JobSpec
		for j := from; j < min(from+size, len(w.Jobs)); j++ {
			b = append(b, apiSpec(w, j, w.Jobs[j].Name))
		}
		batches = append(batches, b)
	}
	return batches
}

// batchRun is what the clients of runBatch send and get back.
type batchRun struct {
	scenario string
	jobs     pb.JobServiceClient
	batches  [][]*pb.JobSpec
	start    time.Time
	sentAt   []time.Duration // by batch, since start

	mu       sync.Mutex
	acked    []string
	ackedAt  map[string]int // job id → batch
	refused  int
	errs     []error
	lastAck  time.Duration
	shedSeen int
	calls    int
}

// send sends every batch from clients side by side, and tells rw of the
// jobs acknowledged.
func (br *batchRun) send(ctx context.Context, clients int, rw *runningWatch) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				if ids := br.call(ctx, b); ids != nil {
					rw.acknowledged(ids)
				}
			}
		}()
	}
	for b := range br.batches {
		next <- b
	}
	close(next)
	wg.Wait()
	rw.acksDone()
}

// call sends batch b, again while it is shed (up to 20 times), and
// returns the ids of the jobs acknowledged (nil when the call failed).
func (br *batchRun) call(ctx context.Context, b int) []string {
	req := &pb.CreateJobsRequest{RequestId: fmt.Sprintf("%s-%d", br.scenario, b), Jobs: br.batches[b]}
	br.sentAt[b] = time.Since(br.start)
	var resp *pb.CreateJobsResponse
	var err error
	for attempt := 0; ; attempt++ {
		resp, err = br.jobs.CreateJobs(ctx, req)
		shed := status.Code(err) == codes.ResourceExhausted && attempt < 20
		br.mu.Lock()
		br.calls++
		if shed {
			br.shedSeen++
		}
		br.mu.Unlock()
		if !shed {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	br.mu.Lock()
	defer br.mu.Unlock()
	if err != nil {
		br.errs = append(br.errs, err)
		return nil
	}
	ids := []string{}
	for _, r := range resp.GetResults() {
		if r.GetCode() != 0 || r.GetJobId() == "" {
			br.refused++
			if len(br.errs) < 3 {
				br.errs = append(br.errs, fmt.Errorf("refused: %s", r.GetMessage()))
			}
			continue
		}
		ids = append(ids, r.GetJobId())
		br.ackedAt[r.GetJobId()] = b
	}
	br.acked = append(br.acked, ids...)
	br.lastAck = time.Since(br.start)
	return ids
}

// figures fills f from what was sent, acknowledged and seen running, and
// the server's CPU seconds over it.
func (br *batchRun) figures(f *APIFigures, rw *runningWatch, cpu float64) {
	rw.mu.Lock()
	f.Jobs, f.Refused = len(br.acked), br.refused
	f.Running = 0
	var lat []time.Duration
	for _, id := range br.acked {
		if at, ok := rw.running[id]; ok {
			f.Running++
			lat = append(lat, at-br.sentAt[br.ackedAt[id]])
		}
	}
	span := rw.lastSeen
	if rw.err != nil && f.Err == "" {
		f.Err = "watch: " + rw.err.Error()
	}
	rw.mu.Unlock()
	if len(br.errs) > 0 && f.Err == "" {
		f.Err = br.errs[0].Error()
	}
	f.Errors = len(br.errs) - min(br.refused, len(br.errs))
	if br.calls > 0 {
		f.Shed = float64(br.shedSeen) / float64(br.calls)
	}
	f.Seconds = span.Seconds()
	if f.Running > 0 && span > 0 {
		f.PerSec = float64(f.Running) / span.Seconds()
	}
	if br.lastAck > 0 {
		f.AckedPerSec = float64(len(br.acked)) / br.lastAck.Seconds()
	}
	lat = sortedDurations(lat)
	f.P50Ms = float64(quantile(lat, 0.50)) / 1e6
	f.P99Ms = float64(quantile(lat, 0.99)) / 1e6
	if len(br.acked) > 0 {
		f.ServerCPUPerJobUs = cpu / float64(len(br.acked)) * 1e6
	}
}

// listRunning lists every job of the server, a page at a time, and
// returns those whose task is running (or ran), by id.
func listRunning(ctx context.Context, jobs pb.JobServiceClient) (map[string]bool, error) {
	return listJobsBy(ctx, jobs, func(j *pb.Job) bool {
		states := j.GetStatus().GetTaskStates()
		return states["RUNNING"]+states["SUCCEEDED"] > 0
	})
}

// listJobsBy lists every job of the server, a page at a time, and tells
// by id which ones hold.
func listJobsBy(ctx context.Context, jobs pb.JobServiceClient, holds func(*pb.Job) bool) (map[string]bool, error) {
	out := map[string]bool{}
	token := ""
	for {
		resp, err := jobs.ListJobs(ctx, &pb.ListJobsRequest{Limit: 5000, PageToken: token})
		if err != nil {
			return out, err
		}
		for _, j := range resp.GetJobs() {
			out[j.GetId()] = holds(j)
		}
		if token = resp.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// jobStoreCeiling times a fresh boltstore doing, for every job of the
// workload, what accepting and placing a single-task job must write at
// least: CreateJobs of the jobs, batch at a time, then one WriteTasks of
// the batch's placed task records. It returns jobs per second.
func jobStoreCeiling(ctx context.Context, w *Workload, batch int, path string) (float64, error) {
	st, err := boltstore.Open(path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	now := time.Now()
	start := time.Now()
	for from := 0; from < len(w.Jobs); from += batch {
		var jobs []*model.Job
		var tasks []*model.TaskRuntime
		for j := from; j < min(from+batch, len(w.Jobs)); j++ {
			spec := w.JobSpec(j)
			job := &model.Job{ID: model.JobID(spec.Name), Spec: spec, ConfigVersion: 1,
				Status: model.JobStatus{State: model.JobInitialized, CreateTime: now, Region: "bench"}}
			jobs = append(jobs, job)
			tasks = append(tasks, &model.TaskRuntime{
				ID: model.TaskID{Job: job.ID}, Run: 1, State: model.TaskLaunching, Goal: model.TaskSucceeded,
				Host: model.HostID(Cluster + "/" + w.Hosts[j%len(w.Hosts)].Name), Cluster: Cluster, UpdateTime: now,
			})
		}
		for i, err := range st.CreateJobs(ctx, jobs) {
			if err != nil {
				return 0, fmt.Errorf("job %s: %w", jobs[i].ID, err)
			}
		}
		if err := st.WriteTasks(ctx, tasks); err != nil {
			return 0, err
		}
	}
	return float64(len(w.Jobs)) / max(time.Since(start).Seconds(), 1e-9), nil
}

// sortedDurations returns a sorted copy.
func sortedDurations(d []time.Duration) []time.Duration {
	out := slices.Clone(d)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
