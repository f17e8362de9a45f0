package mesos

import (
	"testing"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
)

// A master that knows no leader answers 503 and the plugin tries the next
// master; when leadership moves, the old leader closes the stream and
// redirects (307), and the plugin follows it to the new leader as the
// same framework.
func TestMasterElectionAndFailover(t *testing.T) {
	first := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	second := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	first.m.SetNoLeader()
	rp := startPlugin(t, Config{Masters: []string{first.srv.URL, second.srv.URL}})
	waitFor(t, "subscribed to the leader", rp.p.Connected)
	id := rp.p.FrameworkID()
	if !second.m.Subscribed(id) {
		t.Fatal("not subscribed at the leading master")
	}
	if first.m.Stats().Unavailable == 0 || len(first.m.FrameworkIDs()) != 0 {
		t.Errorf("electing master: %d answers 503, frameworks %v", first.m.Stats().Unavailable, first.m.FrameworkIDs())
	}

	first.m.SetRedirect("")
	second.m.SetRedirect(first.srv.Listener.Addr().String())
	waitFor(t, "subscribed at the new leader", func() bool { return first.m.Subscribed(id) })
	if rp.p.FrameworkID() != id {
		t.Errorf("framework id changed from %s to %s", id, rp.p.FrameworkID())
	}
	if second.m.Stats().Redirects == 0 && first.m.Stats().Subscribes == 0 {
		t.Error("no redirect and no subscribe at the new leader")
	}
}
