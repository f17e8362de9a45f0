package lossy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/internal/faultnet"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/tests/bench/inproc"
)

// settings are the detection settings a federation runs with.
type settings struct {
	Name    string
	Profile gossip.Profile
	// Zero keeps the profile's value.
	ProbeInterval, ProbeTimeout time.Duration
	SuspicionMult               int
	IndirectChecks              int
	Health                      policy.HealthConfig
}

func (s settings) tune(c *gossip.Config) {
	c.ProbeInterval, c.ProbeTimeout = s.ProbeInterval, s.ProbeTimeout
	c.SuspicionMult, c.IndirectChecks = s.SuspicionMult, s.IndirectChecks
}

// recommended are the settings the scenarios run with, from
// BenchmarkDetectionTradeoff (docs/reliability.md): memberlist's LAN
// preset as it is (500 ms probe timeout, 3 indirect probes, suspicion
// ×4), a region suspect after 2 s and failed after 3 s without a
// reachable member, alive again only after 30 s heard without a gap. All
// of it can be set from the server's config file.
var recommended = settings{
	Name: "lan, suspicion ×4, fail after 3s", Profile: gossip.ProfileLAN, SuspicionMult: 4, IndirectChecks: 3,
	Health: policy.HealthConfig{SuspectAfter: 2 * time.Second, FailAfter: 3 * time.Second, RecoverAfter: 30 * time.Second},
}

// wan is the link of the scenarios: 5% loss, 100 ms ± 50 ms one way.
var wan = faultnet.Link{Loss: 0.05, Latency: 100 * time.Millisecond, Jitter: 50 * time.Millisecond}

// duration is PELOTON_LOSSY_DURATION, or short in CI.
func duration(t testing.TB, short time.Duration) time.Duration {
	v := os.Getenv("PELOTON_LOSSY_DURATION")
	if v == "" {
		return short
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("PELOTON_LOSSY_DURATION: %v", err)
	}
	return d
}

// startLossy starts regions a, b and c with the recommended settings
// over a network whose every link is wan.
func startLossy(t *testing.T, seed uint64) (*faultnet.Network, *fed) {
	t.Helper()
	n := faultnet.New(seed)
	n.SetDefault(wan)
	return n, startFed(t, n, recommended)
}

// replicatedJobs creates k jobs in region (createJobs) and waits until
// the other regions hold their replicas.
func (f *fed) replicatedJobs(region string, k int) []string {
	f.t.Helper()
	ids := f.createJobs(region, k)
	f.waitReplicated(region, ids)
	return ids
}

// fed is three regions a, b, c over one faulty network.
type fed struct {
	t       *testing.T
	net     *faultnet.Network
	regions map[string]*inproc.Region
	names   []string
	logs    map[string]*logRecorder

	mu          sync.Mutex
	transitions []policy.Transition // seen by every region, tagged by Region field only
	seenBy      []string            // who saw transitions[i]

	conns  map[string]*grpc.ClientConn
	cancel map[string]context.CancelFunc
	wg     sync.WaitGroup
}

// startFed starts regions a, b and c with the settings, each on its own
// loopback address, and waits until each sees the others alive.
func startFed(t *testing.T, n *faultnet.Network, s settings) *fed {
	t.Helper()
	f := &fed{t: t, net: n, regions: map[string]*inproc.Region{}, logs: map[string]*logRecorder{},
		cancel: map[string]context.CancelFunc{}, conns: map[string]*grpc.ClientConn{}}
	for i, name := range []string{"a", "b", "c"} {
		var join []string
		if i > 0 {
			join = []string{f.regions["a"].Gossip.GossipAddr()}
		}
		rec := &logRecorder{}
		region := name
		r, err := inproc.StartRegion(t.Context(), inproc.RegionConfig{
			Name: name, IP: fmt.Sprintf("127.0.0.%d", i+1), Hosts: 4,
			HostShape: model.Resources{MilliCPU: 8000, MemMB: 32768, DiskMB: 100000},
			Gossip: &inproc.GossipConfig{Join: join, Profile: s.Profile, Health: s.Health, ObserveEvery: 250 * time.Millisecond,
				Tuning: func(c *gossip.Config) {
					s.tune(c)
					c.Transport = func(inner memberlist.NodeAwareTransport, addr string) memberlist.NodeAwareTransport {
						return n.Transport(region, addr, inner)
					}
				}},
			Logger: slog.New(rec),
		})
		if err != nil {
			t.Fatalf("region %s: %v", name, err)
		}
		n.Register(r.Addr, name)
		r.Router.AddDialOptions(grpc.WithContextDialer(n.Dialer(name)))
		r.Gossip.OnTransition(func(tr policy.Transition) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.transitions = append(f.transitions, tr)
			f.seenBy = append(f.seenBy, region)
		})
		ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
		f.cancel[name] = cancel
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			r.Failover.Run(ctx)
		}()
		f.regions[name], f.logs[name] = r, rec
		f.names = append(f.names, name)
	}
	t.Cleanup(f.stop)
	t.Cleanup(f.dumpLogs)
	f.waitFor(time.Minute, "every region alive everywhere", func() bool {
		for _, r := range f.regions {
			for _, reg := range r.Gossip.Regions() {
				if reg.Health != "alive" {
					return false
				}
			}
			if len(r.Gossip.Regions()) != 3 {
				return false
			}
		}
		return true
	})
	return f
}

func (f *fed) stop() {
	for _, cc := range f.conns {
		cc.Close()
	}
	for _, cancel := range f.cancel {
		cancel()
	}
	f.wg.Wait()
	var wg sync.WaitGroup
	for _, r := range f.regions {
		wg.Add(1)
		go func() { defer wg.Done(); r.Stop() }()
	}
	wg.Wait()
}

// crash stops a region as a lost datacenter: its failover shell, then
// gossip without leaving, then the rest.
func (f *fed) crash(name string) {
	f.cancel[name]()
	if err := f.regions[name].Crash(context.Background()); err != nil {
		f.t.Logf("crash %s: %v", name, err)
	}
}

func (f *fed) waitFor(d time.Duration, what string, cond func() bool) time.Duration {
	f.t.Helper()
	start := time.Now()
	if err := inproc.WaitFor(f.t.Context(), d, cond); err != nil {
		f.t.Fatalf("%s: %v", what, err)
	}
	return time.Since(start)
}

// health is how viewer sees region.
func (f *fed) health(viewer, region string) string {
	for _, r := range f.regions[viewer].Gossip.Regions() {
		if r.Name == region {
			return r.Health
		}
	}
	return ""
}

// failures lists the transitions to failed, as "viewer saw region".
func (f *fed) failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, tr := range f.transitions {
		if tr.To == policy.HealthFailed {
			out = append(out, f.seenBy[i]+" saw "+tr.Region+" failed ("+tr.Cause+")")
		}
	}
	return out
}

// count counts the transitions viewer saw of region into health to.
func (f *fed) count(viewer, region string, to policy.Health) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := 0
	for i, tr := range f.transitions {
		if f.seenBy[i] == viewer && tr.Region == region && tr.To == to {
			k++
		}
	}
	return k
}

// createJobs creates k relocatable jobs of 2 instances in region and
// waits until they run; it returns their ids.
func (f *fed) createJobs(region string, k int) []string {
	f.t.Helper()
	r := f.regions[region]
	var ids []string
	for i := range k {
		spec := &pb.JobSpec{Name: fmt.Sprintf("%s-%d", region, i), Region: region, Preemptible: true, Instances: 2,
			Failover: &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_ANY},
			Task:     &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 0.5, MemMb: 16}}}
		resp, err := r.Router.Jobs().CreateJob(f.t.Context(), &pb.CreateJobRequest{Spec: spec})
		if err != nil {
			f.t.Fatalf("create in %s: %v", region, err)
		}
		ids = append(ids, resp.GetJob().GetId())
	}
	f.waitFor(30*time.Second, region+"'s jobs running", func() bool {
		for _, id := range ids {
			if f.state(region, id) != pb.JobState_JOB_STATE_RUNNING {
				return false
			}
		}
		return true
	})
	return ids
}

// own is a client of the region's own shard: the test's calls to its
// router, marked as already routed, are served there.
func (f *fed) own(region string) (pb.JobServiceClient, context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cc := f.conns[region]
	if cc == nil {
		var err error
		cc, err = grpc.NewClient(f.regions[region].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			f.t.Fatal(err)
		}
		f.conns[region] = cc
	}
	ctx := metadata.AppendToOutgoingContext(f.t.Context(), federation.RoutedKey, "1")
	return pb.NewJobServiceClient(cc), ctx
}

// state is a job's state in the region's own shard.
func (f *fed) state(region, id string) pb.JobState {
	c, ctx := f.own(region)
	got, err := c.GetJob(ctx, &pb.GetJobRequest{Id: id})
	if err != nil {
		return pb.JobState_JOB_STATE_UNSPECIFIED
	}
	return got.GetJob().GetStatus().GetState()
}

// relocated lists the jobs in the region's own shard that are copies of
// relocated jobs, by the original's "<id>@<region>".
func (f *fed) relocated(region string) map[string][]string {
	c, ctx := f.own(region)
	resp, err := c.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		f.t.Fatalf("list jobs in %s: %v", region, err)
	}
	out := map[string][]string{}
	for _, j := range resp.GetJobs() {
		if from := j.GetSpec().GetLabels()[federation.LabelRelocatedFrom]; from != "" {
			out[from] = append(out[from], j.GetId()+" "+j.GetStatus().GetState().String())
		}
	}
	return out
}

// waitReplicated waits until every other region holds replicas of ids
// with their progress.
func (f *fed) waitReplicated(owner string, ids []string) {
	f.t.Helper()
	f.waitFor(30*time.Second, "replicas of "+owner+"'s jobs elsewhere", func() bool {
		held := map[string]bool{}
		for _, name := range f.names {
			if name == owner {
				continue
			}
			resp, err := f.regions[name].Router.ListReplicas(f.t.Context(), &pb.ListReplicasRequest{OwnerRegion: owner})
			if err != nil {
				return false
			}
			for _, rep := range resp.GetReplicas() {
				held[rep.GetJob().GetId()] = true
			}
		}
		for _, id := range ids {
			if !held[id] {
				return false
			}
		}
		return true
	})
}

// traffic sums the gossip and gRPC traffic between every pair.
func (f *fed) traffic() faultnet.Counts {
	var sum faultnet.Counts
	for _, a := range f.names {
		for _, b := range f.names {
			if a == b {
				continue
			}
			c := f.net.Counts(a, b)
			sum.Packets += c.Packets
			sum.Dropped += c.Dropped
			sum.Bytes += c.Bytes
			sum.Dials += c.Dials
			sum.DialsFailed += c.DialsFailed
		}
	}
	return sum
}

// probes sums what every region's member saw of its probes of the
// others' members, and how many it suspects now.
func (f *fed) probes() (lost, failed, suspect int) {
	for _, r := range f.regions {
		for _, reg := range r.Gossip.Regions() {
			for _, m := range reg.Members {
				lost += m.Probes.Lost
				failed += m.Probes.Failed
				if m.Status == "suspect" {
					suspect++
				}
			}
		}
	}
	return lost, failed, suspect
}

// healthAt is how viewer held region at the time at: the latest
// transition it saw before then (alive before any).
func (f *fed) healthAt(viewer, region string, at time.Time) policy.Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := policy.HealthAlive
	for i, tr := range f.transitions {
		if f.seenBy[i] == viewer && tr.Region == region && tr.At.Before(at) {
			h = tr.To
		}
	}
	return h
}

// logRecorder is a slog handler that keeps the messages at Info and above,
// with their times.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
	times []time.Time
}

func (l *logRecorder) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo
}
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Time.Format("15:04:05.000 "))
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, b.String())
	l.times = append(l.times, r.Time)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// dumpLogs prints every region's kept messages when the test failed (or
// PELOTON_LOSSY_LOGS is set), so that a run can be read afterwards.
func (f *fed) dumpLogs() {
	if !f.t.Failed() && os.Getenv("PELOTON_LOSSY_LOGS") == "" {
		return
	}
	for _, name := range f.names {
		l := f.logs[name]
		l.mu.Lock()
		for _, line := range l.lines {
			f.t.Logf("%s: %s", name, line)
		}
		l.mu.Unlock()
	}
}

// countLines counts the kept messages that contain s.
func (l *logRecorder) countLines(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			k++
		}
	}
	return k
}

// timesOf lists the times of the kept messages that contain s.
func (l *logRecorder) timesOf(s string) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for i, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, l.times[i])
		}
	}
	return out
}
