package mesos

import (
	"context"
	"testing"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Offers the plugin holds past the master's offer timeout are rescinded;
// the plugin drops them and launches on the offers that follow.
func TestOfferTimeoutRescindsHeldOffers(t *testing.T) {
	c := newCluster(t, mesostest.Config{OfferTimeout: 150 * time.Millisecond}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, OfferHold: time.Hour})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	waitFor(t, "offers rescinded for time", func() bool { return c.m.Stats().OffersRescind >= 2 })
	waitFor(t, "the plugin holds only live offers", func() bool {
		rp.p.mu.Lock()
		held := len(rp.p.offers)
		rp.p.mu.Unlock()
		return held <= c.m.OutstandingOffers()
	})
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{launch("jobT-0-1", "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})}); err != nil {
		t.Fatal(err)
	}
	waitState(t, rp.sink, "jobT-0-1", model.TaskSucceeded)
	if c.m.Stats().Calls["DECLINE"] != 0 {
		t.Error("offers were declined: OfferHold did not keep them")
	}
}

// A launch dropped for invalid offers is launched again once; a second
// drop, or a drop for another reason, goes to the shard.
func TestDroppedLaunchIsRetriedOnce(t *testing.T) {
	p, err := New(Config{Cluster: "dc1", Masters: []string{"http://m:5050"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	l := launch("jobD-0-1", "dc1/a", 1, nil)
	invalid := &mesoslib.TaskStatus{TaskID: mesoslib.TaskID{Value: "jobD-0-1"}, State: mesoslib.TASK_DROPPED.Enum(), Reason: mesoslib.REASON_INVALID_OFFERS.Enum()}
	other := &mesoslib.TaskStatus{TaskID: mesoslib.TaskID{Value: "jobD-0-1"}, State: mesoslib.TASK_DROPPED.Enum(), Reason: mesoslib.REASON_CONTAINER_LAUNCH_FAILED.Enum()}
	p.mu.Lock()
	p.agentLocked("A", "a", nil)
	p.mu.Unlock()
	send := func() {
		p.mu.Lock()
		p.noteInFlightLocked([]hostmgr.Launch{l}, now)
		p.runs[l.Run] = &runState{agentID: "A", host: l.Host}
		p.mu.Unlock()
	}
	for _, tc := range []struct {
		name  string
		drops []*mesoslib.TaskStatus
		want  []bool
	}{
		{"retried once", []*mesoslib.TaskStatus{invalid, invalid}, []bool{true, false}},
		{"other reasons go to the shard", []*mesoslib.TaskStatus{other}, []bool{false}},
	} {
		p.mu.Lock()
		p.inFlight = nil
		p.dropWaitingLocked(l.Run)
		p.mu.Unlock()
		for i, st := range tc.drops {
			send()
			p.mu.Lock()
			got := p.droppedForOffersLocked(l.Run, st, now)
			p.mu.Unlock()
			if got != tc.want[i] {
				t.Errorf("%s: drop %d retried=%v, want %v", tc.name, i, got, tc.want[i])
			}
		}
		if n := len(p.waiting); n != 1 && tc.want[0] || n != 0 && !tc.want[0] {
			t.Errorf("%s: %d launches parked", tc.name, n)
		}
	}
}
