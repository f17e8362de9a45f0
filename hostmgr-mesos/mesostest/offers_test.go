package mesostest

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// With an offer timeout, an offer held past it is rescinded and its
// resources offered again; an ACCEPT naming the rescinded offer drops its
// tasks (TASK_DROPPED, REASON_INVALID_OFFERS).
func TestOffersPastTheTimeoutAreRescinded(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096})
	e.m.cfg.OfferTimeout = time.Second
	f := e.subscribe(t, frameworkInfo("f", "r", "", mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	old := f.offer(e, "S0")
	e.tick(500 * time.Millisecond)
	if e.m.OutstandingOffers() != 1 {
		t.Fatalf("offer rescinded before the timeout")
	}
	e.tick(600 * time.Millisecond)
	ev := f.next(scheduler.Event_RESCIND)
	if ev.Rescind.OfferID != old.ID {
		t.Errorf("rescinded %v, want %v", ev.Rescind.OfferID, old.ID)
	}
	if s := e.m.Stats(); s.OffersRescind != 1 {
		t.Errorf("rescinds = %d", s.OffersRescind)
	}
	fresh := f.offer(e, "S0")
	if fresh.ID == old.ID {
		t.Fatal("the rescinded offer came back under its id")
	}
	f.accept(old, launchOp(commandTask("late", "S0", nil, scalar("cpus", 1, "r"))))
	st := f.update("late")
	if st.GetState() != mesos.TASK_DROPPED || st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Errorf("launch on a rescinded offer: %v %v", st.GetState(), st.GetReason())
	}
	f.accept(fresh, launchOp(commandTask("ok", "S0", nil, scalar("cpus", 1, "r"))))
	waitUpdate(e, f, "ok", func(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_RUNNING })
}
