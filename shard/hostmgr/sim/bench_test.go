package sim

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// countingSink counts statuses and signals once every run has ended.
type countingSink struct {
	want    int64
	running atomic.Int64
	ended   atomic.Int64
	calls   atomic.Int64
	done    chan struct{}
}

func (s *countingSink) HostsUpdated([]model.Host)   {}
func (s *countingSink) HostsRemoved([]model.HostID) {}
func (s *countingSink) TaskStatuses(statuses []hostmgr.TaskStatus) {
	s.calls.Add(1)
	var running, ended int64
	for _, st := range statuses {
		if st.State == model.TaskRunning {
			running++
		} else if st.State.IsTerminal() {
			ended++
		}
	}
	s.running.Add(running)
	if s.ended.Add(ended) == s.want && ended > 0 {
		close(s.done)
	}
}

type lifecycleScale struct {
	runs, hosts int
}

// lifecycle launches sc.runs runs spread over sc.hosts hosts, lets their
// time pass and waits until all ended; it returns the wall time taken and
// the number of TaskStatuses calls.
func lifecycle(b *testing.B, sc lifecycleScale) (time.Duration, int64) {
	b.Helper()
	fake := clock.NewFake(epoch)
	p, err := New(Config{Cluster: "bench", Clock: fake, Generate: Generator{Count: sc.hosts, Shape: shape,
		Labels: map[string][]string{"zone": {"a", "b", "c"}}}, DefaultDuration: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	hostIDs := make([]model.HostID, sc.hosts)
	for i, h := range p.Hosts() {
		hostIDs[i] = h.ID
	}
	spec := &model.TaskSpec{Command: "simulated"}
	launches := make([]hostmgr.Launch, sc.runs)
	for i := range launches {
		launches[i] = hostmgr.Launch{Run: model.RunID("job-" + strconv.Itoa(i) + "-1"), Host: hostIDs[i%sc.hosts], Task: spec}
	}
	sink := &countingSink{want: int64(sc.runs), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})

	start := time.Now()
	go func() { p.Run(ctx, sink); close(stopped) }()
	const batch = 10000
	for i := 0; i < len(launches); i += batch {
		if err := p.Launch(ctx, launches[i:min(i+batch, len(launches))]); err != nil {
			b.Fatal(err)
		}
	}
	fake.Advance(time.Minute)
	<-sink.done
	elapsed := time.Since(start)

	cancel()
	<-stopped
	if got := sink.running.Load(); got != int64(sc.runs) {
		b.Fatalf("%d RUNNING statuses, want %d", got, sc.runs)
	}
	return elapsed, sink.calls.Load()
}

// BenchmarkLifecycle launches and finishes 1,000,000 runs on 50,000 hosts
// and compares its throughput with a baseline of 10,000 runs on 500 hosts
// measured in the same run: a ratio near 1 means the cost per run does not
// grow with the cluster. Run with -benchtime=1x.
func BenchmarkLifecycle(b *testing.B) {
	baseline := lifecycleScale{runs: 10_000, hosts: 500}
	full := lifecycleScale{runs: 1_000_000, hosts: 50_000}
	for range b.N {
		baseTime, _ := lifecycle(b, baseline)
		fullTime, calls := lifecycle(b, full)
		baseRate := float64(baseline.runs) / baseTime.Seconds()
		fullRate := float64(full.runs) / fullTime.Seconds()
		b.ReportMetric(fullRate, "runs/s")
		b.ReportMetric(baseRate, "baseline-runs/s")
		b.ReportMetric(fullRate/baseRate, "ratio")
		b.Logf("%d runs on %d hosts: %v, %.0f runs/s, %d sink calls; baseline %d runs on %d hosts: %.0f runs/s; ratio %.2f",
			full.runs, full.hosts, fullTime.Round(time.Millisecond), fullRate, calls, baseline.runs, baseline.hosts, baseRate, fullRate/baseRate)
	}
}
