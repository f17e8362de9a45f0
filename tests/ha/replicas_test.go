package ha

import (
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
)

// takeover is one fault of a region's leader and what followed.
type takeover struct {
	kind     string        // "kill -9" or "SIGSTOP"
	took     time.Duration // from the fault to another member leading
	firstAck time.Duration // from the fault to the first create acknowledged that started after it
	fenced   int           // writes of a paused leader refused after it resumed
}

// TestChaosThreeReplicas runs a region as production does: a leader and
// two standbys on one Cassandra keyspace, the leader elected by the
// region's lease (TTL 3 s). Jobs arrive throughout from clients that know
// all three members and send a failed create again, with the same request
// id, to the next (failoverLoad). Again and again the leader is faulted:
// odd faults kill -9 it (it is started again as a standby), even ones
// SIGSTOP it until another member leads, then SIGCONT it (its writes in
// flight must be refused as fenced, and it must stop leading). Each
// takeover's time is logged: from the fault to another member leading,
// and to the first create acknowledged after it.
//
// It fails on an acknowledged job lost or not succeeding with all its
// tasks, a create failed in a way a client does not retry, a retry that
// created a second job, two runs of a task RUNNING at once, or a resumed
// leader that wrote after the takeover. CI runs 4 faults on the test
// Cassandra node; `make chaos-replicas` runs PELOTON_REPLICA_FAULTS (30),
// and with PELOTON_REPLICA_RING=3 on a ring of three Cassandra nodes of
// its own with replication 3: the production shape of a region.
func TestChaosThreeReplicas(t *testing.T) {
	faults := chaosEnv("PELOTON_REPLICA_FAULTS", 4)
	ring := chaosEnv("PELOTON_REPLICA_RING", 0)
	var cass, replication string
	if ring > 0 {
		started := time.Now()
		c := startCassandraCluster(t, ring)
		cass, replication = strings.Join(c.hosts(), ","), fmt.Sprint(ring)
		t.Logf("a ring of %d Cassandra nodes ready in %.1fs: %s", ring, time.Since(started).Seconds(), cass)
	} else {
		cass = cassandraAddr(t)
	}
	keyspace := fmt.Sprintf("peloton_replicas_%d", time.Now().UnixNano()%1e9)
	if ring == 0 {
		dropKeyspaceAfter(t, cass, keyspace)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := mrand.New(mrand.NewPCG(seed, 0))

	members := startRegion(t, regionSpec{members: 3, cassandra: cass, replication: replication, keyspace: keyspace,
		sim: "sim,hosts=50,cpu=8,mem=65536,duration=2s", extra: "ha: {leaseTTL: 3s}"})
	leaderOf := func(except *member) *member {
		for _, m := range members {
			if m != except && m.alive() && m.leading() {
				return m
			}
		}
		return nil
	}
	waitFor(t, 60*time.Second, "a leader", func() bool { return leaderOf(nil) != nil })
	allHealthy := func() bool {
		for _, m := range members {
			if !m.healthy() {
				return false
			}
		}
		return true
	}
	waitFor(t, 30*time.Second, "three members healthy", allHealthy)

	load := newFailoverLoad(members, "replicas", 4)
	stopLoad := load.start(t, 3, 100*time.Millisecond)
	waitFor(t, 30*time.Second, "the first create acknowledged", func() bool { return load.firstAckAfter(0) >= 0 })

	var takeovers []takeover
	for i := 1; i <= faults; i++ {
		time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond) // jobs arriving, running, finishing
		leader := leaderOf(nil)
		if leader == nil {
			t.Fatalf("fault %d: no member leads", i)
		}
		pause := i%2 == 0
		tk := takeover{kind: map[bool]string{true: "SIGSTOP", false: "kill -9"}[pause]}
		at := load.now()
		if pause {
			if err := leader.pause(); err != nil {
				t.Fatal(err)
			}
		} else {
			leader.kill()
		}
		tk.took = waitFor(t, 60*time.Second, fmt.Sprintf("fault %d: another member leading", i), func() bool { return leaderOf(leader) != nil })
		next := leaderOf(leader)
		if pause {
			if err := leader.resume(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, fmt.Sprintf("fault %d: the resumed leader to stop leading", i), func() bool { return !leader.leading() })
			if acceptedAfterTakeover(leader.log()) {
				t.Errorf("fault %d: the resumed leader wrote after the takeover:\n%s", i, lastLines(leader.log(), 30))
			}
			tk.fenced = strings.Count(leader.log(), store.ErrFenced.Error())
		} else {
			leader.start() // back as a standby
		}
		waitFor(t, 90*time.Second, fmt.Sprintf("fault %d: a create acknowledged after it", i), func() bool { return load.firstAckAfter(at) >= 0 })
		tk.firstAck = load.firstAckAfter(at) - at
		waitFor(t, 60*time.Second, fmt.Sprintf("fault %d: three members healthy again", i), allHealthy)
		t.Logf("fault %d: %s of the leader %s; %s led %.1fs later; the first create sent after the fault was acknowledged %.1fs after it; fenced writes of the resumed leader %d",
			i, tk.kind, leader.name, next.name, tk.took.Seconds(), tk.firstAck.Seconds(), tk.fenced)
		takeovers = append(takeovers, tk)
	}
	time.Sleep(2 * time.Second)
	stopLoad()

	s := load.summary()
	for _, f := range s.failed {
		t.Errorf("a call failed: %s", f)
	}
	rerun, dups := load.verifyJobs(t, func() *member { return leaderOf(nil) }, 3*time.Minute)
	t.Logf("%d faults of the leader of three members (%s): creates acknowledged %d (%d tasks), failed %d, attempts %d, retried: %s; the slowest create took %.1fs; tasks whose run was lost at a fault and run again %d (the simulated hosts live in the leader's process), with two runs RUNNING at once %d",
		len(takeovers), takeoverSpread(takeovers), len(s.acked), len(s.acked)*load.tasks, len(s.failed), s.attempts, s.retriedString(), s.slowest.Seconds(), rerun, dups)
}

// takeoverSpread summarises the takeovers of each kind: how many, and the
// least, median and most time to a new leader and to the first
// acknowledged create.
func takeoverSpread(ts []takeover) string {
	var parts []string
	for _, kind := range []string{"kill -9", "SIGSTOP"} {
		var took, ack []float64
		for _, tk := range ts {
			if tk.kind == kind {
				took, ack = append(took, tk.took.Seconds()), append(ack, tk.firstAck.Seconds())
			}
		}
		if len(took) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s, new leader after %s s, first create acknowledged after %s s", len(took), kind, spread(took), spread(ack)))
	}
	return strings.Join(parts, "; ")
}

// spread prints the least, median and most of xs as "min/median/max".
func spread(xs []float64) string {
	sort.Float64s(xs)
	return fmt.Sprintf("%.1f/%.1f/%.1f", xs[0], xs[len(xs)/2], xs[len(xs)-1])
}
