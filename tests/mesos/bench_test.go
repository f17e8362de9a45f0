package mesos

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
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
	"github.com/peloton-federated/peloton/tests/testkit"
)

var (
	benchAgents = flag.Int("mesos.agents", 10000, "emulated agents in BenchmarkMesosLaunch")
	benchTasks  = flag.Int("mesos.tasks", 100000, "tasks launched in BenchmarkMesosLaunch")
	benchRounds = flag.Int("mesos.rounds", 3, "rounds of BenchmarkMesosLaunch: ceiling and plugin interleaved, median ratio reported")
	benchOnly   = flag.String("mesos.only", "", "run only the ceiling or only the plugin in BenchmarkMesosLaunch (to profile one side)")
)

// benchMaster serves an emulator with n agents of 16 CPUs until stop.
func benchMaster(b *testing.B, n int) (*mesostest.Master, string, func()) {
	specs := make([]mesostest.AgentSpec, n)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: "S" + strconv.Itoa(i), Hostname: "agent-" + strconv.Itoa(i), CPU: 16, MemMB: 65536, DiskMB: 100000}
	}
	m := testkit.ServeMesos(b, mesostest.Config{AllocationInterval: 20 * time.Millisecond, HeartbeatInterval: 5 * time.Second, OfferBatch: 1000}, specs...)
	return m.Master, m.URL, m.Stop
}

const benchTaskCPU, benchTaskMem = 1.0, 256.0

// callQueue feeds a no-op scheduler's call workers: acknowledgements and
// other calls in two FIFOs served in turn, as the plugin's dispatcher
// serves them, so that the ceiling's client is no worse at ordering its
// calls than the plugin.
type callQueue struct {
	mu           sync.Mutex
	cond         *sync.Cond
	acks, others []*scheduler.Call
	ackTurn      bool
	closed       bool
}

func newCallQueue() *callQueue {
	q := &callQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *callQueue) push(c *scheduler.Call) {
	q.mu.Lock()
	if c.Type == scheduler.Call_ACKNOWLEDGE {
		q.acks = append(q.acks, c)
	} else {
		q.others = append(q.others, c)
	}
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *callQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop waits for a call; nil once closed.
func (q *callQueue) pop() *scheduler.Call {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.closed {
			return nil
		}
		for range 2 {
			q.ackTurn = !q.ackTurn
			list := &q.others
			if q.ackTurn {
				list = &q.acks
			}
			if len(*list) > 0 {
				c := (*list)[0]
				(*list)[0] = nil
				*list = (*list)[1:]
				return c
			}
		}
		q.cond.Wait()
	}
}

// launchRun is one measured run: from the moment offers for every agent
// are held, until the master took the last task (launched) and until the
// last task was reported RUNNING.
type launchRun struct {
	launched, running time.Duration
	accepts           int
	lost              int64
}

func (r launchRun) rate(tasks int) float64 { return float64(tasks) / r.running.Seconds() }

// watchLaunched returns a function that waits until the master has taken
// n tasks and returns that moment.
func watchLaunched(m *mesostest.Master, n int) func() time.Time {
	done := make(chan time.Time, 1)
	go func() {
		for m.Stats().TasksLaunched < n {
			time.Sleep(5 * time.Millisecond)
		}
		done <- time.Now()
	}()
	return func() time.Time { return <-done }
}

// noopScheduler is the emulator's ceiling: it waits until it holds an
// offer of every agent, then accepts each at once with the tasks the
// plugin's runs are placed there (task j on agent j mod agents: the same
// tasks on the same agents), acknowledges every update and does nothing
// else, with as many calls in flight as the plugin (workers).
func noopScheduler(b *testing.B, m *mesostest.Master, url string, agents, tasks, workers int) launchRun {
	codec := codecs.ByMediaType[codecs.MediaTypeProtobuf]
	endpoint := url + mesostest.Path
	stream := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(codec))
	callc := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(codec), httpcli.Do(httpcli.With(httpcli.Transport(func(t *http.Transport) { t.MaxIdleConnsPerHost = 2 * workers }))))
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
	queue := newCallQueue()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := queue.pop(); c != nil; c = queue.pop() {
				c.FrameworkID = &fwID
				r, err := callc.Send(client.RequestSingleton(c), client.ResponseClassAuto, httpcli.Header("Mesos-Stream-Id", streamID), httpcli.Context(ctx))
				if r != nil {
					r.Close()
				}
				if err != nil && ctx.Err() == nil {
					b.Errorf("%s: %v", c.Type, err)
				}
			}
		}()
	}
	defer func() { queue.close(); wg.Wait() }()
	launched, nRunning, accepts := 0, 0, 0
	next := make([]int, agents) // the next task of each agent
	for i := range next {
		next[i] = i
	}
	dur := "1h"
	accept := func(o *mesoslib.Offer) {
		a, err := strconv.Atoi(strings.TrimPrefix(o.AgentID.Value, "S"))
		if err != nil || a >= agents || next[a] >= tasks {
			queue.push(calls.Decline(o.ID))
			return
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
		for cpus >= benchTaskCPU && mem >= benchTaskMem && next[a] < tasks {
			id := "noop-" + strconv.Itoa(next[a])
			next[a] += agents
			sh := false
			cmd := "true"
			tis = append(tis, mesoslib.TaskInfo{Name: id, TaskID: mesoslib.TaskID{Value: id}, AgentID: o.AgentID,
				Resources: resources(role, benchTaskCPU, benchTaskMem),
				Command: &mesoslib.CommandInfo{Value: &cmd, Shell: &sh, Environment: &mesoslib.Environment{
					Variables: []mesoslib.Environment_Variable{{Name: mesostest.EnvDuration, Value: &dur}}}}})
			cpus, mem = cpus-benchTaskCPU, mem-benchTaskMem
			launched++
		}
		accepts++
		queue.push(calls.Accept(calls.OfferOperations{calls.OpLaunch(tis...)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	}
	// Hold offers until every agent has offered, as the plugin does before
	// its clock starts.
	var held []mesoslib.Offer
	seen := map[string]bool{}
	var start time.Time
	var waitLaunched func() time.Time
	// Events are decoded on a goroutine of their own, as the plugin
	// decodes them, so that decoding overlaps handling.
	events := make(chan *scheduler.Event, 1024)
	go func() {
		defer close(events)
		for {
			ev := &scheduler.Event{}
			if err := resp.Decode(ev); err != nil {
				return // the loop below fails if it still waits for events
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	for nRunning < tasks {
		ev, ok := <-events
		if !ok {
			b.Fatal("event stream ended")
		}
		switch ev.Type {
		case scheduler.Event_SUBSCRIBED:
			fwID = *ev.Subscribed.FrameworkID
		case scheduler.Event_OFFERS:
			if start.IsZero() {
				for _, o := range ev.Offers.Offers {
					held = append(held, o)
					seen[o.AgentID.Value] = true
				}
				if len(seen) < agents {
					continue
				}
				waitLaunched = watchLaunched(m, tasks)
				start = time.Now()
				for i := range held {
					accept(&held[i])
				}
				held = nil
				continue
			}
			for i := range ev.Offers.Offers {
				accept(&ev.Offers.Offers[i])
			}
		case scheduler.Event_UPDATE:
			st := ev.Update.Status
			if st.GetState() == mesoslib.TASK_RUNNING {
				nRunning++
			}
			if len(st.UUID) > 0 {
				queue.push(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
			}
		}
	}
	running := time.Since(start)
	return launchRun{launched: waitLaunched().Sub(start), running: running, accepts: accepts}
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

// pluginRun launches the tasks through the Mesos plugin at its default
// configuration, the way the job manager does: Launch calls of 1,000
// placed runs, one after another, spread over all agents (every agent gets
// one run of each tenth call). The clock starts once every agent is a
// host, that is once the plugin holds an offer of each.
func pluginRun(b *testing.B, m *mesostest.Master, url string, agents, tasks int) launchRun {
	p, err := mesos.New(mesos.Config{Cluster: "dc1", Masters: []string{url}, OfferHold: time.Hour, LaunchWait: time.Minute})
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
	before := m.Stats().Calls["ACCEPT"]
	waitLaunched := watchLaunched(m, tasks)
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
	select {
	case <-sink.done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d running after 5 minutes (%d lost)", sink.running.Load(), tasks, sink.lost.Load())
	}
	running := time.Since(start)
	return launchRun{launched: waitLaunched().Sub(start), running: running, accepts: m.Stats().Calls["ACCEPT"] - before, lost: sink.lost.Load()}
}

// BenchmarkMesosLaunch launches -mesos.tasks tasks on -mesos.agents
// emulated agents with a no-op scheduler (the emulator's ceiling) and
// through the Mesos plugin, each on a fresh emulator, interleaved for
// -mesos.rounds rounds (the order alternates), and prints every round and
// the median of the plugin's ratio to the ceiling, with the absolute
// rates beside it. Not run in CI:
//
//	go test -run '^$' -bench MesosLaunch -benchtime 1x -timeout 30m ./tests/mesos
func BenchmarkMesosLaunch(b *testing.B) {
	agents, tasks, rounds := *benchAgents, *benchTasks, max(*benchRounds, 1)
	workers := mesos.DefaultCallWorkers
	for i := 0; i < b.N; i++ {
		fmt.Printf("mesos launch: %d agents, %d tasks, %d rounds (ceiling and plugin interleaved, fresh emulator each), %d calls in flight each\n", agents, tasks, rounds, workers)
		var ceilRates, rates, launchRates, ratios []float64
		for r := 0; r < rounds; r++ {
			var ceil, plug launchRun
			runCeiling := func() {
				if *benchOnly == "plugin" {
					ceil.running = time.Second
					return
				}
				m, url, stop := benchMaster(b, agents)
				ceil = noopScheduler(b, m, url, agents, tasks, workers)
				stop()
			}
			runPlugin := func() {
				if *benchOnly == "ceiling" {
					plug.running = time.Second
					return
				}
				m, url, stop := benchMaster(b, agents)
				plug = pluginRun(b, m, url, agents, tasks)
				stop()
			}
			if r%2 == 0 {
				runCeiling()
				runPlugin()
			} else {
				runPlugin()
				runCeiling()
			}
			if plug.lost > 0 {
				b.Errorf("round %d: %d runs lost", r+1, plug.lost)
			}
			ceilRates = append(ceilRates, ceil.rate(tasks))
			rates = append(rates, plug.rate(tasks))
			launchRates = append(launchRates, float64(tasks)/plug.launched.Seconds())
			ratios = append(ratios, plug.rate(tasks)/ceil.rate(tasks))
			fmt.Printf("  round %d: no-op ceiling %6.0f tasks/s (all launched %6.2fs, all RUNNING %6.2fs, %d ACCEPTs) | plugin %6.0f tasks/s (all launched %6.2fs, all RUNNING %6.2fs, %d ACCEPTs) | ratio %.2f\n",
				r+1, ceil.rate(tasks), ceil.launched.Seconds(), ceil.running.Seconds(), ceil.accepts,
				plug.rate(tasks), plug.launched.Seconds(), plug.running.Seconds(), plug.accepts, ratios[r])
		}
		ratio := median(ratios)
		fmt.Printf("  median: no-op ceiling %.0f tasks/s, plugin %.0f tasks/s launched to RUNNING; plugin / ceiling %.2f (rounds %.2f-%.2f)\n",
			median(ceilRates), median(rates), ratio, slices.Min(ratios), slices.Max(ratios))
		fmt.Printf("  plugin launches taken by the master: %.0f/s (median; Peloton's goal: 1,000 launches/s)\n", median(launchRates))
		b.ReportMetric(median(rates), "tasks/s")
		b.ReportMetric(median(ceilRates), "ceiling-tasks/s")
		b.ReportMetric(median(launchRates), "launches/s")
		b.ReportMetric(ratio, "ratio")
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
