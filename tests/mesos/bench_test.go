package mesos

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/client"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	mesos "github.com/peloton-federated/peloton/hostmgr-mesos"
	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

var (
	benchAgents = flag.Int("mesos.agents", 10000, "emulated agents in BenchmarkMesosLaunch")
	benchTasks  = flag.Int("mesos.tasks", 100000, "tasks launched in BenchmarkMesosLaunch")
)

// benchMaster serves an emulator with n agents of 16 CPUs.
func benchMaster(b *testing.B, n int) (*mesostest.Master, string, func()) {
	m := mesostest.New(mesostest.Config{AllocationInterval: 20 * time.Millisecond, HeartbeatInterval: 5 * time.Second, OfferBatch: 1000})
	specs := make([]mesostest.AgentSpec, n)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: "S" + strconv.Itoa(i), Hostname: "agent-" + strconv.Itoa(i), CPU: 16, MemMB: 65536, DiskMB: 100000}
	}
	if err := m.AddAgents(specs...); err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	ctx, cancel := context.WithCancel(context.Background())
	go m.Run(ctx)
	go srv.Serve(l)
	return m, "http://" + l.Addr().String(), func() { cancel(); srv.Close() }
}

const benchTaskCPU, benchTaskMem = 1.0, 256.0

// noopScheduler is the emulator's ceiling: it accepts every offer at once
// with as many tasks as fit, acknowledges every update and does nothing
// else. It returns the time until the last task was accepted and until
// all ran.
func noopScheduler(b *testing.B, url string, tasks int) (accepted, running time.Duration) {
	codec := codecs.ByMediaType[codecs.MediaTypeProtobuf]
	endpoint := url + mesostest.Path
	stream := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(codec))
	callc := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(codec), httpcli.Do(httpcli.With(httpcli.Transport(func(t *http.Transport) { t.MaxIdleConnsPerHost = 16 }))))
	info := &mesoslib.FrameworkInfo{User: "bench", Name: "noop", Roles: []string{"*"},
		Capabilities: []mesoslib.FrameworkInfo_Capability{{Type: mesoslib.FrameworkInfo_Capability_MULTI_ROLE}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := stream.Send(client.RequestSingleton(calls.Subscribe(info)), client.ResponseClassStreaming, httpcli.Context(ctx))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Close()
	streamID := resp.(*httpcli.Response).Header.Get("Mesos-Stream-Id")
	var fwID mesoslib.FrameworkID
	work := make(chan *scheduler.Call, 4096)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				c.FrameworkID = &fwID
				r, err := callc.Send(client.RequestSingleton(c), client.ResponseClassAuto, httpcli.Header("Mesos-Stream-Id", streamID))
				if r != nil {
					r.Close()
				}
				if err != nil {
					b.Errorf("%s: %v", c.Type, err)
				}
			}
		}()
	}
	defer func() { close(work); wg.Wait() }()
	start := time.Now()
	launched, nRunning := 0, 0
	dur := "1h"
	for nRunning < tasks {
		var ev scheduler.Event
		if err := resp.Decode(&ev); err != nil {
			b.Fatal(err)
		}
		switch ev.Type {
		case scheduler.Event_SUBSCRIBED:
			fwID = *ev.Subscribed.FrameworkID
		case scheduler.Event_OFFERS:
			for _, o := range ev.Offers.Offers {
				if launched >= tasks {
					work <- calls.Decline(o.ID)
					continue
				}
				var tis []mesoslib.TaskInfo
				cpus, mem := 0.0, 0.0
				for _, r := range o.Resources {
					switch r.Name {
					case "cpus":
						cpus += r.Scalar.Value
					case "mem":
						mem += r.Scalar.Value
					}
				}
				role := "*"
				for cpus >= benchTaskCPU && mem >= benchTaskMem && launched < tasks {
					id := "noop-" + strconv.Itoa(launched)
					sh := false
					cmd := "true"
					tis = append(tis, mesoslib.TaskInfo{Name: id, TaskID: mesoslib.TaskID{Value: id}, AgentID: o.AgentID,
						Resources: resources(role, benchTaskCPU, benchTaskMem),
						Command: &mesoslib.CommandInfo{Value: &cmd, Shell: &sh, Environment: &mesoslib.Environment{
							Variables: []mesoslib.Environment_Variable{{Name: mesostest.EnvDuration, Value: &dur}}}}})
					cpus, mem = cpus-benchTaskCPU, mem-benchTaskMem
					launched++
				}
				work <- calls.Accept(calls.OfferOperations{calls.OpLaunch(tis...)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0))
				if launched == tasks && accepted == 0 {
					accepted = time.Since(start)
				}
			}
		case scheduler.Event_UPDATE:
			st := ev.Update.Status
			if st.GetState() == mesoslib.TASK_RUNNING {
				nRunning++
			}
			if len(st.UUID) > 0 {
				work <- calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID)
			}
		}
	}
	return accepted, time.Since(start)
}

func resources(role string, cpu, mem float64) []mesoslib.Resource {
	t := mesoslib.SCALAR
	star := "*"
	mk := func(name string, v float64) mesoslib.Resource {
		r := role
		return mesoslib.Resource{Name: name, Type: &t, Scalar: &mesoslib.Value_Scalar{Value: v}, Role: &star,
			AllocationInfo: &mesoslib.Resource_AllocationInfo{Role: &r}}
	}
	return []mesoslib.Resource{mk("cpus", cpu), mk("mem", mem)}
}

// countingSink counts hosts and RUNNING statuses.
type countingSink struct {
	hosts   atomic.Int64
	running atomic.Int64
	lost    atomic.Int64
	done    chan struct{}
	want    int64
	once    sync.Once
}

func (s *countingSink) HostsUpdated(hs []model.Host) {
	s.hosts.Add(int64(len(hs)))
}
func (s *countingSink) HostsRemoved([]model.HostID) {}
func (s *countingSink) TaskStatuses(sts []hostmgr.TaskStatus) {
	for _, st := range sts {
		switch st.State {
		case model.TaskRunning:
			if s.running.Add(1) == s.want {
				s.once.Do(func() { close(s.done) })
			}
		case model.TaskLost, model.TaskFailed:
			s.lost.Add(1)
		}
	}
}

// pluginRun launches the tasks through the Mesos plugin the way the job
// manager does (Launch calls of 1,000 placed runs, one after another) and
// returns the time until Launch returned for the last batch and until all
// ran.
func pluginRun(b *testing.B, url string, agents, tasks int) (accepted, running time.Duration, lost int64) {
	p, err := mesos.New(mesos.Config{Cluster: "dc1", Masters: []string{url}, OfferHold: time.Hour, LaunchWait: time.Minute, CallWorkers: 8})
	if err != nil {
		b.Fatal(err)
	}
	sink := &countingSink{done: make(chan struct{}), want: int64(tasks)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx, sink)
	deadline := time.Now().Add(2 * time.Minute)
	for sink.hosts.Load() < int64(agents) {
		if time.Now().After(deadline) {
			b.Fatalf("only %d hosts reported", sink.hosts.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	spec := &model.TaskSpec{Command: "true", Env: map[string]string{mesostest.EnvDuration: "1h"}, Resources: model.ResourcesFromDecimal(benchTaskCPU, benchTaskMem, 0, 0)}
	start := time.Now()
	const batch = 1000
	for i := 0; i < tasks; i += batch {
		ls := make([]hostmgr.Launch, 0, batch)
		for j := i; j < min(i+batch, tasks); j++ {
			host := model.HostID("dc1/agent-" + strconv.Itoa(j%agents))
			ls = append(ls, hostmgr.Launch{Run: model.RunID(fmt.Sprintf("bench-%d-1", j)), Host: host, Task: spec})
		}
		if err := p.Launch(ctx, ls); err != nil {
			b.Fatal(err)
		}
	}
	accepted = time.Since(start)
	select {
	case <-sink.done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d running after 5 minutes (%d lost)", sink.running.Load(), tasks, sink.lost.Load())
	}
	return accepted, time.Since(start), sink.lost.Load()
}

// BenchmarkMesosLaunch launches -mesos.tasks tasks on -mesos.agents
// emulated agents, first with a no-op scheduler (the emulator's ceiling),
// then through the Mesos plugin, and prints launch rates, time to all
// RUNNING and the plugin's ratio to the ceiling. Not run in CI:
//
//	go test -run '^$' -bench MesosLaunch -benchtime 1x ./tests/mesos
func BenchmarkMesosLaunch(b *testing.B) {
	agents, tasks := *benchAgents, *benchTasks
	for i := 0; i < b.N; i++ {
		_, url, stop := benchMaster(b, agents)
		noopAccepted, noopRunning := noopScheduler(b, url, tasks)
		stop()
		m, url2, stop2 := benchMaster(b, agents)
		accepted, running, lost := pluginRun(b, url2, agents, tasks)
		st := m.Stats()
		stop2()
		noopRate := float64(tasks) / noopRunning.Seconds()
		rate := float64(tasks) / running.Seconds()
		fmt.Printf("mesos launch: %d agents, %d tasks\n", agents, tasks)
		fmt.Printf("  no-op scheduler (emulator ceiling): all accepted %v, all RUNNING %v, %.0f tasks/s\n", noopAccepted.Round(time.Millisecond), noopRunning.Round(time.Millisecond), noopRate)
		fmt.Printf("  mesos plugin:                       all accepted %v, all RUNNING %v, %.0f tasks/s (%d lost, %d ACCEPT calls, %d acks)\n", accepted.Round(time.Millisecond), running.Round(time.Millisecond), rate, lost, st.Calls["ACCEPT"], st.Acks)
		fmt.Printf("  plugin / ceiling: %.2f\n", rate/noopRate)
		b.ReportMetric(rate, "tasks/s")
		b.ReportMetric(noopRate, "ceiling-tasks/s")
		b.ReportMetric(rate/noopRate, "ratio")
	}
}
