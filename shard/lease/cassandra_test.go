package lease_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/lease"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
)

// cassandraHostsEnv names the Cassandra to test against, as for the
// cassandra store's own tests; .ci/run starts one and sets it.
const cassandraHostsEnv = "PELOTON_TEST_CASSANDRA"

// leaseTestKeyspace is shared by every run: each run uses a lease name of
// its own, and leases end by themselves, so nothing needs dropping.
const leaseTestKeyspace = "peloton_lease_test"

func cassandraHosts(t *testing.T) []string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(cassandraHostsEnv))
	if v == "" {
		testenv.Missing(t, "a test Cassandra ("+cassandraHostsEnv+")", "deploy/cassandra/cassandra.sh start, then set "+cassandraHostsEnv+"=127.0.0.1:PORT")
	}
	return strings.Split(v, ",")
}

// realProcess is one elector on its own Cassandra session, as in its own
// process, with the wall clock.
type realProcess struct {
	holder   string
	elector  *lease.Elector
	store    *faultyStore
	stop     context.CancelFunc
	returned chan error

	mu        sync.Mutex
	electedAt time.Time
	term      uint64
}

func (p *realProcess) elected() (time.Time, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.electedAt, p.term
}

// TestCassandraStandbyTakesOverFromKilledLeader runs two electors on a
// real Cassandra: one wins; it keeps the lease past several TTLs; it is
// killed (no more renewals, no release); the other takes over only after
// the killed leader's lease has ended, with a higher term.
func TestCassandraStandbyTakesOverFromKilledLeader(t *testing.T) {
	hosts := cassandraHosts(t)
	const ttl = 3 * time.Second
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "shard/test-" + hex.EncodeToString(b)

	start := func(holder string) *realProcess {
		s, err := cassandra.Open(ctx, cassandra.Config{
			Hosts: hosts, Keyspace: leaseTestKeyspace, Timeout: 5 * time.Second, Migrate: true,
		})
		if err != nil {
			t.Fatalf("open Cassandra for %s: %v", holder, err)
		}
		t.Cleanup(func() { s.Close() })
		p := &realProcess{holder: holder, store: &faultyStore{LeaseStore: s, clk: clock.Real{}}, returned: make(chan error, 1)}
		p.elector, err = lease.New(lease.Config{
			Store: p.store, Name: name, Holder: holder,
			TTL: ttl, RenewEvery: time.Second, RetryEvery: 500 * time.Millisecond, SafetyMargin: 600 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		p.stop = stop
		go func() {
			p.returned <- p.elector.Run(runCtx, func(ctx context.Context, term uint64) {
				p.mu.Lock()
				p.electedAt, p.term = time.Now(), term
				p.mu.Unlock()
				<-ctx.Done()
			}, nil)
		}()
		t.Cleanup(func() {
			stop()
			<-p.returned
		})
		return p
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		poll := time.NewTicker(20 * time.Millisecond)
		defer poll.Stop()
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
			<-poll.C
		}
	}

	first, second := start("a"), start("b")
	var leader, standby *realProcess
	waitFor("one elector leads", func() bool {
		for _, p := range []*realProcess{first, second} {
			if p.elector.State().Role == lease.Leader {
				leader = p
			}
		}
		return leader != nil
	})
	standby = first
	if leader == first {
		standby = second
	}
	_, term := leader.elected()
	waitFor("the standby reports the leader", func() bool {
		holder, got := standby.elector.Leader()
		return holder == leader.holder && got == term
	})

	// The leader keeps the lease by renewing well past its TTL.
	firstSafe := leader.elector.State().SafeUntil
	waitFor("the leader renews for more than a TTL", func() bool {
		return leader.elector.State().SafeUntil.After(firstSafe.Add(ttl))
	})
	if s := leader.elector.State(); s.Role != lease.Leader || s.Term != term {
		t.Fatalf("leader's state %+v after renewing, want leader at term %d", s, term)
	}
	if s := standby.elector.State(); s.Role != lease.Standby {
		t.Fatalf("standby's state %+v while the leader renews", s)
	}

	// Kill the leader: no more renewals, and no release.
	leader.store.dropRelease.Store(true)
	leader.stop()
	if err := <-leader.returned; err != nil {
		t.Fatalf("killed leader's Run: %v", err)
	}
	leader.returned <- nil
	killedAt := time.Now()
	leaseEnd := leader.store.lastHeldFrom().Add(ttl) // the earliest Cassandra may drop it

	waitFor("the standby takes over", func() bool { return standby.elector.State().Role == lease.Leader })
	takenAt, newTerm := standby.elected()
	if newTerm <= term {
		t.Fatalf("standby leads at term %d, want more than the killed leader's %d", newTerm, term)
	}
	if takenAt.Before(leaseEnd) {
		t.Fatalf("standby took over %v before the killed leader's lease could end",
			leaseEnd.Sub(takenAt))
	}
	holder, got, err := standby.store.LeaseHolder(ctx, name)
	if err != nil || holder != standby.holder || got != newTerm {
		t.Fatalf("Cassandra says %q at term %d (%v), want %q at %d", holder, got, err, standby.holder, newTerm)
	}
	t.Logf("%s led at term %d; killed; %s took over at term %d after %v",
		leader.holder, term, standby.holder, newTerm, takenAt.Sub(killedAt).Round(time.Millisecond))
}
