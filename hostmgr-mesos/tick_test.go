package mesos

import (
	"context"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// A volume removal waiting for an offer of its agent does not hold back
// the report of a launch that waited too long on another agent.
func TestTickExpiresLaunchesWhileARemovalWaits(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	p, err := New(Config{Cluster: "dc1", Masters: []string{"http://127.0.0.1:1"}, Clock: clk, LaunchWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	run := model.RunID("job-0-1")
	launch := hostmgr.Launch{Run: run, Host: "dc1/agent-1"}
	p.agents["a0"] = &agentState{id: "a0", removals: map[string]bool{"vol": true}}
	p.agents["a1"] = &agentState{id: "a1", waiting: []parkedLaunch{{launch: launch, deadline: clk.Now().Add(time.Second)}}}
	p.waiting[run] = p.agents["a1"]
	clk.Advance(2 * time.Second)
	p.tick(context.Background())
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queued) != 1 || p.queued[0].State != model.TaskLost {
		t.Fatalf("reported %+v, want the launch that waited too long LOST", p.queued)
	}
}
