// Package ha tests a region with two `peloton server` members on a real
// Cassandra: one leads, the other stands by and takes over when the leader
// is killed.
package ha

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

func cassandraAddr(t *testing.T) string {
	addr := os.Getenv("PELOTON_TEST_CASSANDRA")
	if addr == "" {
		testenv.Missing(t, "a test Cassandra (PELOTON_TEST_CASSANDRA)", "deploy/cassandra/cassandra.sh start, then set PELOTON_TEST_CASSANDRA=127.0.0.1:PORT")
	}
	return addr
}

// dropKeyspaceAfter removes a test's scratch keyspace once the test (and
// every member it started, whose cleanups run first) is done, so a long
// run of trials does not fill the shared Cassandra's memory.
func dropKeyspaceAfter(t *testing.T, addr, keyspace string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := cassandra.Open(ctx, cassandra.Config{Hosts: []string{addr}, Keyspace: keyspace})
		if err != nil {
			t.Logf("drop keyspace %s: %v", keyspace, err)
			return
		}
		defer s.Close()
		if err := s.DropKeyspace(ctx); err != nil {
			t.Logf("%v", err)
		}
	})
}

// member is one `peloton server` of a region, on plain HTTP; start runs
// it again after a stop or a kill, on the same config.
type member struct {
	*testkit.API
	t      *testing.T
	name   string
	addr   string
	config string
	// bin is the peloton binary the member runs; empty: the one built
	// from this tree.
	bin  string
	proc *testkit.Process
}

// newMember is a member named name on a reserved loopback address; its
// config is the caller's to write.
func newMember(t *testing.T, name string) *member {
	addr := testkit.FreeAddr(t)
	return &member{API: &testkit.API{T: t, URL: "http://" + addr}, t: t, name: name, addr: addr}
}

// start starts the member's server, stopped when the test ends (SIGTERM,
// SIGKILL after 15 s), its last lines printed if the test failed.
func (m *member) start() {
	m.t.Helper()
	bin := m.bin
	if bin == "" {
		bin = binary
	}
	m.proc = testkit.StartServerProcess(m.t, bin, m.config, testkit.Options{Name: m.name})
}

func (m *member) kill()         { m.proc.Kill() }
func (m *member) stop()         { m.proc.Stop() }
func (m *member) log() string   { return m.proc.Output() }
func (m *member) pause() error  { return m.proc.Signal(syscall.SIGSTOP) }
func (m *member) resume() error { return m.proc.Signal(syscall.SIGCONT) }

// A 10,000-task job on simulated hosts; the leader is killed mid-job, the
// standby takes over within the lease TTL, rebuilds from the store and the
// host manager, and the job completes with every task succeeded.
func TestStandbyFinishesTheJob(t *testing.T) {
	standbyFinishesTheJob(t, "ha: {leaseTTL: 3s}", nil)
}

// The leader is paused (SIGSTOP) past its lease instead: the standby takes
// over, and when the old leader resumes (SIGCONT) with the writes it had
// in flight, the store refuses them for their stale term.
func TestPausedLeaderIsFenced(t *testing.T) {
	pauseLeader = true
	defer func() { pauseLeader = false }()
	standbyFinishesTheJob(t, "ha: {leaseTTL: 3s}", nil)
}

// pauseLeader makes standbyFinishesTheJob pause the leader rather than
// kill it.
var pauseLeader bool

// standbyFinishesTheJob runs two members with the ha section ha. When
// leaseHolder is not nil it reads the region's lease: held by the leader,
// then by the standby at a higher term after the kill.
func standbyFinishesTheJob(t *testing.T, ha string, leaseHolder func() (string, uint64)) {
	cass := cassandraAddr(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	keyspace := fmt.Sprintf("peloton_ha_%x", b)
	dropKeyspaceAfter(t, cass, keyspace)
	members := startRegion(t, regionSpec{members: 2, cassandra: cass, keyspace: keyspace,
		sim: "sim,hosts=50,cpu=8,mem=65536,duration=3s", extra: ha})
	leaderOf := func() *member {
		for _, m := range members {
			if m.alive() && strings.Contains(m.log(), "leading the region's shard") &&
				!strings.Contains(m.log(), "stopped leading") {
				return m
			}
		}
		return nil
	}
	waitFor(t, 60*time.Second, "a leader", func() bool { return leaderOf() != nil })
	leader := leaderOf()
	var standby *member
	for _, m := range members {
		if m != leader {
			standby = m
		}
	}
	waitFor(t, 30*time.Second, "both members healthy", func() bool { return members[0].healthy() && members[1].healthy() })
	var leaderTerm uint64
	if leaseHolder != nil {
		holder, term := leaseHolder()
		if holder != leader.addr || term == 0 {
			t.Fatalf("the region's lease is held by %q at term %d, want the leader %s", holder, term, leader.addr)
		}
		leaderTerm = term
	}

	// Submitted at the standby: it forwards to the leader.
	id := standby.CreateJob(`{"name":"big","instances":10000,"preemptible":true,"task":{"command":"sim","resources":{"cpu":0.1,"memMb":1}}}`)
	status := func(m *member) (testkit.JobStatus, error) {
		var out struct {
			Job struct {
				Status testkit.JobStatus `json:"status"`
			} `json:"job"`
		}
		err := m.Get("/v1/jobs/"+id, &out)
		return out.Job.Status, err
	}
	waitFor(t, 60*time.Second, "the job under way", func() bool {
		st, err := status(leader)
		return err == nil && st.TaskStates["SUCCEEDED"] > 1000 && st.TaskStates["RUNNING"] > 0
	})
	killed := time.Now()
	if pauseLeader {
		if err := leader.pause(); err != nil {
			t.Fatal(err)
		}
	} else {
		leader.kill()
	}
	took := waitFor(t, 60*time.Second, "the standby leading", func() bool {
		return strings.Contains(standby.log(), "leading the region's shard")
	})
	t.Logf("standby took over %.1fs after the leader's %s (lease TTL 3s)", took.Seconds(), map[bool]string{true: "SIGSTOP", false: "SIGKILL"}[pauseLeader])
	if pauseLeader {
		if err := leader.resume(); err != nil {
			t.Fatal(err)
		}
		took := waitFor(t, 30*time.Second, "the resumed leader to stop leading", func() bool {
			return strings.Contains(leader.log(), "stopped leading")
		})
		// The elector's safe deadline has usually passed on resuming, so the
		// shard stops before it writes; a write already on its way is
		// refused by the store for its stale term.
		refused := strings.Count(leader.log(), store.ErrFenced.Error())
		t.Logf("resumed leader stopped leading %.1fs after SIGCONT; %d of its writes refused as fenced", took.Seconds(), refused)
	}
	if leaseHolder != nil {
		if holder, term := leaseHolder(); holder != standby.addr || term <= leaderTerm {
			t.Fatalf("after the takeover the lease is held by %q at term %d, want %s above term %d", holder, term, standby.addr, leaderTerm)
		}
	}
	waitFor(t, 3*time.Minute, "the job to succeed", func() bool {
		st, err := status(standby)
		return err == nil && st.State == "JOB_STATE_SUCCEEDED"
	})
	st, _ := status(standby)
	if st.TaskStates["SUCCEEDED"] != 10000 {
		t.Fatalf("job succeeded with %v", st.TaskStates)
	}
	t.Logf("10,000 tasks succeeded %.1fs after the kill", time.Since(killed).Seconds())
}

var (
	waitFor   = testkit.WaitFor
	lastLines = testkit.LastLines
)
