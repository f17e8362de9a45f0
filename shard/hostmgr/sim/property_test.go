package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// referenceRun is how the naive model below expects a run to go.
type referenceRun struct {
	host    model.HostID
	due     time.Time
	code    int32
	state   model.TaskState
	end     time.Time
	running bool // was ever RUNNING
}

// referenceCluster is a naive model of the simulation: no heap, no timer,
// every run settled by scanning when asked.
type referenceCluster struct {
	now   time.Time
	hosts map[model.HostID]bool
	runs  map[model.RunID]*referenceRun
}

func (c *referenceCluster) settle(r *referenceRun) {
	if r.state == model.TaskRunning && !r.due.After(c.now) {
		r.state, r.end = model.TaskSucceeded, r.due
		if r.code != 0 {
			r.state = model.TaskFailed
		}
	}
}

// TestMatchesNaiveReference drives the simulation and a naive model with
// the same random operations and compares how every run ended.
func TestMatchesNaiveReference(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkAgainstReference(t, seed) })
	}
}

func checkAgainstReference(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	const hostCount = 4
	p, sink, fake := startSim(t, Config{Generate: Generator{Count: hostCount}, DefaultDuration: 3 * time.Second})
	ref := &referenceCluster{now: epoch, hosts: map[model.HostID]bool{}, runs: map[model.RunID]*referenceRun{}}
	var hostIDs []model.HostID
	for i := range hostCount {
		id := model.HostID(fmt.Sprintf("sim/host-%d", i))
		hostIDs = append(hostIDs, id)
		ref.hosts[id] = true
	}
	var runIDs []model.RunID
	ctx := context.Background()
	for step := range 300 {
		switch op := rng.IntN(10); {
		case op < 5: // launch
			run := model.RunID(fmt.Sprintf("run-%d", step))
			host := hostIDs[rng.IntN(hostCount)]
			d := time.Duration(rng.IntN(8)) * time.Second
			code := []int32{0, 0, 1, 137}[rng.IntN(4)]
			launch(t, p, hostmgr.Launch{Run: run, Host: host, Task: task(EnvDuration, d.String(), EnvExitCode, fmt.Sprint(code))})
			r := &referenceRun{host: host, due: ref.now.Add(d), code: code, state: model.TaskRunning, running: true}
			if !ref.hosts[host] {
				r.state, r.end, r.running = model.TaskLost, ref.now, false
			}
			ref.runs[run] = r
			runIDs = append(runIDs, run)
		case op < 7 && len(runIDs) > 0: // kill
			run := runIDs[rng.IntN(len(runIDs))]
			r := ref.runs[run]
			ref.settle(r)
			if r.state == model.TaskRunning {
				r.state, r.end = model.TaskKilled, ref.now
			}
			if err := p.Kill(ctx, run, r.host, time.Second); err != nil {
				t.Fatal(err)
			}
		case op < 9: // time passes
			d := time.Duration(rng.IntN(3000)) * time.Millisecond
			fake.Advance(d)
			ref.now = ref.now.Add(d)
		default: // a host goes away or comes back
			host := hostIDs[rng.IntN(hostCount)]
			if ref.hosts[host] {
				for _, r := range ref.runs {
					if r.host == host {
						ref.settle(r)
						if r.state == model.TaskRunning {
							r.state, r.end = model.TaskLost, ref.now
						}
					}
				}
				delete(ref.hosts, host)
				if err := p.RemoveHost(host); err != nil {
					t.Fatal(err)
				}
			} else {
				ref.hosts[host] = true
				if err := p.AddHost(HostSpec{Name: string(host[len("sim/"):])}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	fake.Advance(time.Hour)
	ref.now = ref.now.Add(time.Hour)
	for _, r := range ref.runs {
		ref.settle(r)
	}

	sink.waitUntil(t, "every run to end", func() bool {
		ended := map[model.RunID]bool{}
		for _, st := range sink.statuses {
			if st.State.IsTerminal() {
				ended[st.Run] = true
			}
		}
		return len(ended) == len(ref.runs)
	})
	for run, want := range ref.runs {
		h := sink.history(run)
		sawRunning, sawEnd := false, false
		for _, st := range h {
			switch {
			case st.State == model.TaskRunning:
				sawRunning = true
				if sawEnd {
					t.Errorf("%s: RUNNING after its end", run)
				}
			case st.State != want.state:
				t.Errorf("%s: reported %v, reference %v", run, st.State, want.state)
			case !sawEnd && !st.Time.Equal(want.end), sawEnd && want.state != model.TaskLost && !st.Time.Equal(want.end):
				// A run unknown to the simulation is LOST anew whenever
				// asked; any other end is reported as it happened.
				t.Errorf("%s: %v at %v, reference at %v", run, st.State, st.Time.Sub(epoch), want.end.Sub(epoch))
			case want.state != model.TaskLost && want.state != model.TaskKilled && st.ExitCode != want.code:
				t.Errorf("%s: exit code %d, reference %d", run, st.ExitCode, want.code)
			default:
				sawEnd = true
			}
			if st.State.IsTerminal() {
				sawEnd = true
			}
		}
		if sawRunning != want.running {
			t.Errorf("%s: RUNNING reported %v, reference %v", run, sawRunning, want.running)
		}
	}
}
