package ha

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// cassandraCluster is a throwaway ring of this test's own, started by
// `cassandra.sh cluster` on 127.0.0.2 onwards.
type cassandraCluster struct {
	nodes []*cassandraNode
	// spare is a loopback address after the nodes', its ports free, for a
	// node that replaces one of them.
	spare string
}

// startCassandraCluster starts a ring of n nodes (--durable: a node killed
// with SIGKILL comes back with every write it acknowledged), each with JMX
// on a port of 127.0.0.1 of its own for nodetool, and stops every node at
// the test's end.
func startCassandraCluster(t *testing.T, n int) *cassandraCluster {
	script, dir := cassandraScript(t), t.TempDir()
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("127.0.0.%d", i+2)
	}
	spare := fmt.Sprintf("127.0.0.%d", n+2)
	all := append(addrs[:n:n], spare)
	port, storagePort := testkit.FreePortOn(t, all...), testkit.FreePortOn(t, all...)
	// Node i of the ring opens JMX on the i-th port of the run.
	jmx := testkit.FreePorts(t, "127.0.0.1", n)
	c := &cassandraCluster{spare: spare}
	for i, addr := range addrs {
		c.nodes = append(c.nodes, &cassandraNode{script: script, dir: filepath.Join(dir, fmt.Sprintf("node%d", i+1)), addr: addr, port: port, storagePort: storagePort})
	}
	t.Cleanup(func() { runScript(t, script, "cluster", "stop", "--kill", "--dir", dir) })
	runScript(t, script, "cluster", "start", "--dir", dir, "--nodes", fmt.Sprint(n),
		"--first-address", addrs[0], "--port", fmt.Sprint(port), "--storage-port", fmt.Sprint(storagePort),
		"--jmx-port", fmt.Sprint(jmx), "--clean", "--durable")
	return c
}

// hosts are the contact points of every node.
func (c *cassandraCluster) hosts() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.hostPort()
	}
	return out
}

// The production shape of a region's store: three Cassandra nodes, the
// keyspace with three replicas, reads and writes at LOCAL_QUORUM and
// compare-and-sets at LOCAL_SERIAL (docs/storage.md), under the load of
// TestCassandraOutage. Each round:
//
//  1. one node killed (SIGKILL) for a while, then started again: the shard
//     acknowledges creates throughout. A create may be refused as
//     Unavailable (a client retries it: in flight on the killed node, or
//     a read sent to it before the other nodes took it for down), never
//     left hanging or failed otherwise;
//  2. two nodes killed: no quorum. Every create is refused as Unavailable
//     within twice the store's request timeout (none hangs, none is a
//     500), and the refused ones leave the jobs as they were; one node
//     started again: the shard acknowledges creates by itself, with no
//     restart;
//  3. the other node started again.
//
// After the rounds, a node's disk is lost: the node is killed and its data
// directory removed, and a new node on a spare address takes its place in
// the ring (`cassandra.sh start --replace-address`: it streams the dead
// node's ranges from the other two) and is repaired (`nodetool repair
// -full`: writes made while it streamed did not reach it). Creates are
// acknowledged throughout.
//
// At the end every acknowledged job is there and succeeds with every task,
// and no task had two runs RUNNING at once. Then the server and the two
// other nodes are stopped and the replacement, alone, is asked for the
// jobs at consistency ONE: it must hold every acknowledged one itself.
// CI runs one round with 10 s faults; `make cassandra-faults` runs
// PELOTON_CLUSTER_ROUNDS (5) rounds with faults of PELOTON_CLUSTER_HOLD
// seconds (60).
func TestCassandraCluster(t *testing.T) {
	if out, err := exec.Command(cassandraScript(t), "check").CombinedOutput(); err != nil {
		testenv.Missing(t, "Cassandra to start here ("+strings.TrimSpace(string(out))+")", "bash tests/env.sh setup")
	}
	rounds := chaosEnv("PELOTON_CLUSTER_ROUNDS", 1)
	hold := time.Duration(chaosEnv("PELOTON_CLUSTER_HOLD", 10)) * time.Second
	started := time.Now()
	c := startCassandraCluster(t, 3)
	t.Logf("3 nodes ready in %.1fs: %s", time.Since(started).Seconds(), strings.Join(c.hosts(), ", "))

	const storeTimeout = 5 * time.Second
	r := startOutageRun(t, c.hosts(), "3", storeTimeout)
	load := r.load
	r.acksAfter(0, 30*time.Second, "the first job acknowledged")
	time.Sleep(3 * time.Second)

	for round := 1; round <= rounds; round++ {
		// Which nodes: the round moves the faults around the ring.
		one, two := c.nodes[(round+1)%3], c.nodes[round%3]

		// 1. One node down: a quorum is left.
		killed := load.now()
		one.run(t, "stop", "--kill")
		time.Sleep(hold)
		restarting := load.now()
		one.run(t, "start", "--durable")
		back := load.now()
		w := load.window(killed, restarting)
		late := load.window(killed+storeTimeout, restarting)
		t.Logf("round %d, %s down %.1fs: creates in flight %d acknowledged, %d refused (%d of them started more than %v after the kill), %d shed, %d broken; reads %d (the slowest %.0fms), %d failed; its restart took %.1fs",
			round, one.addr, (restarting - killed).Seconds(), w.acked, w.refused, late.refused, storeTimeout, w.shed, w.broken,
			w.reads, float64(w.slowestRead.Microseconds())/1000, w.readsFailed, (back - restarting).Seconds())
		if w.acked == 0 {
			t.Errorf("round %d: no create acknowledged while one node of three was down", round)
		}
		time.Sleep(3 * time.Second)

		// 2. Two nodes down: no quorum, creates refused; one back: the
		// shard carries on by itself.
		killed = load.now()
		one.run(t, "stop", "--kill")
		two.run(t, "stop", "--kill")
		waitFor(t, 30*time.Second, "a create refused with two nodes of three down", func() bool {
			return load.window(killed, load.now()).refused >= 2
		})
		r.unchangedWhileRefused(2 * time.Second)
		if rest := hold - (load.now() - killed); rest > 0 {
			time.Sleep(rest)
		}
		restarting = load.now()
		two.run(t, "start", "--durable")
		back = load.now()
		firstAck := r.acksAfter(back, 90*time.Second, "a create acknowledged after one of the two nodes returned")
		w = load.window(killed, back)
		lastRefused := load.window(killed+time.Second, back) // refusals of calls that met the outage whole
		t.Logf("round %d, %s and %s down %.1fs: creates in flight %d acknowledged, %d refused (the slowest answered in %.1fs; started a second or more into it %d, the slowest %.1fs), %d shed, %d broken; %s's restart took %.1fs and the first create after it was acknowledged %.1fs later",
			round, one.addr, two.addr, (restarting - killed).Seconds(), w.acked, w.refused, w.slowest.Seconds(), lastRefused.refused, lastRefused.slowest.Seconds(), w.shed, w.broken,
			two.addr, (back - restarting).Seconds(), (firstAck - back).Seconds())
		if w.slowest > 2*storeTimeout {
			t.Errorf("round %d: with two nodes of three down a create was refused only after %.1fs, over twice the store timeout %v", round, w.slowest.Seconds(), storeTimeout)
		}

		// 3. The third node back.
		restarting = load.now()
		one.run(t, "start", "--durable")
		t.Logf("round %d: %s back after %.1fs", round, one.addr, (load.now() - restarting).Seconds())
		time.Sleep(3 * time.Second)
	}
	// 4. A node's disk lost: the node killed, its data removed, and a new
	// node on a spare address takes its place in the ring.
	wiped := c.nodes[1]
	killed := load.now()
	wiped.run(t, "stop", "--kill")
	if err := os.RemoveAll(filepath.Join(wiped.dir, "data")); err != nil {
		t.Fatal(err)
	}
	// Cassandra refuses to replace a node the others still hold alive.
	seed := c.nodes[0]
	waitFor(t, 90*time.Second, "the seed to take "+wiped.addr+" for down", func() bool {
		return seed.statusOf(wiped.addr) == "DN"
	})
	t.Logf("the seed took %s for down %.1fs after the kill", wiped.addr, (load.now() - killed).Seconds())
	restarting := load.now()
	// The replacement is a new address, as a new machine would be: a node
	// that replaces its own address gossips as hibernating, which the
	// others never gossip to, so in a ring of three it hears of the seed
	// only if a peer's gossip reaches it before its state does (under
	// load, six attempts in a row failed with "Unable to contact any
	// seeds"). A refused attempt (the others may still hold the dead node
	// alive on a loaded machine) is tried again on an emptied data dir.
	repl := &cassandraNode{script: wiped.script, dir: filepath.Join(filepath.Dir(wiped.dir), "node4"), addr: c.spare, port: wiped.port, storagePort: wiped.storagePort}
	flags := []string{"--seeds", seed.addr, "--token", wiped.setting(t, "TOKEN"),
		"--jmx-port", fmt.Sprint(testkit.FreePorts(t, "127.0.0.1", 1)), "--replace-address", wiped.addr, "--durable"}
	const replaceAttempts = 3
	for attempt := 1; ; attempt++ {
		out, err := exec.Command(repl.script, repl.args("start", flags...)...).CombinedOutput()
		if err == nil {
			break
		}
		if attempt == replaceAttempts {
			t.Fatalf("cassandra.sh start --replace-address, %d attempts: %v\n%s\nthe seed's view of %s: %s; its log about it:\n%s",
				attempt, err, out, wiped.addr, seed.statusOf(wiped.addr), seed.logAbout(wiped.addr, 30))
		}
		t.Logf("replacing %s by %s, attempt %d: %v; trying again in 15s\n%s\nthe seed's view of %s: %s; its log about it:\n%s",
			wiped.addr, repl.addr, attempt, err, lastLines(string(out), 12), wiped.addr, seed.statusOf(wiped.addr), seed.logAbout(wiped.addr, 15))
		repl.run(t, "stop", "--kill")
		if err := os.RemoveAll(filepath.Join(repl.dir, "data")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(15 * time.Second)
	}
	replaced := load.now()
	repl.nodetool(t, "repair", "-full", "peloton")
	repaired := load.now()
	w := load.window(killed, repaired)
	t.Logf("%s wiped: its replacement %s streamed and joined in %.1fs, the repair took %.1fs; creates in flight from the kill to the repair's end %d acknowledged, %d refused, %d shed, %d broken",
		wiped.addr, repl.addr, (replaced - restarting).Seconds(), (repaired - replaced).Seconds(), w.acked, w.refused, w.shed, w.broken)
	if w.acked == 0 {
		t.Errorf("no create acknowledged while %s was wiped and replaced", wiped.addr)
	}
	time.Sleep(3 * time.Second)

	all := r.finish()
	t.Logf("%d rounds of faults of %v and a node wiped: %d creates acknowledged, %d refused, %d broken", rounds, hold, all.acked, all.refused, all.broken)

	// The replacement alone holds every acknowledged job.
	acked := r.ackedBefore(load.now())
	r.m.stop()
	for _, n := range c.nodes {
		if n != wiped {
			n.run(t, "stop", "--kill")
		}
	}
	held := map[string]bool{}
	for _, id := range repl.cql(t, "SELECT id FROM peloton.jobs") {
		held[id] = true
	}
	var missing []string
	for _, id := range acked {
		if !held[id] {
			missing = append(missing, id)
		}
	}
	t.Logf("the replacement alone holds %d jobs; of the %d acknowledged, %d missing", len(held), len(acked), len(missing))
	if len(missing) > 0 {
		t.Errorf("the replacement, repaired, lacks %d acknowledged jobs: %s", len(missing), strings.Join(missing[:min(len(missing), 10)], ", "))
	}
}

// nodetool runs nodetool against the node (cassandra.sh nodetool) and
// fails the test if it fails.
// statusOf is how the node's `nodetool status` shows addr ("UN", "DN",
// ...; "" when it does not list it or nodetool failed).
func (n *cassandraNode) statusOf(addr string) string {
	out, err := exec.Command(n.script, "nodetool", "--dir", n.dir, "--", "status").Output()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[1] == addr {
			return f[0]
		}
	}
	return ""
}

// logAbout returns the last most lines of the node's log that name addr or
// gossip, for a failure's report.
func (n *cassandraNode) logAbout(addr string, most int) string {
	b, err := os.ReadFile(filepath.Join(n.dir, "cassandra.log"))
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, addr) || strings.Contains(l, "Gossip") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep[max(0, len(keep)-most):], "\n")
}

// setting is one of the settings the node was started with (its
// node.env: TOKEN, SEEDS, ...).
func (n *cassandraNode) setting(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.dir, "node.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	t.Fatalf("%s has no %s in its node.env", n.dir, key)
	return ""
}

func (n *cassandraNode) nodetool(t *testing.T, args ...string) {
	t.Helper()
	runScript(t, n.script, append([]string{"nodetool", "--dir", n.dir, "--"}, args...)...)
}

// cql runs one statement on the node at consistency ONE (cassandra.sh cql)
// and returns the first column of each row.
func (n *cassandraNode) cql(t *testing.T, stmt string) []string {
	t.Helper()
	out, err := exec.Command(n.script, "cql", "--dir", n.dir, stmt).Output()
	if err != nil {
		t.Fatalf("cassandra.sh cql %q: %v", stmt, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-1], "(") {
		t.Fatalf("cassandra.sh cql %q: no rows in %q", stmt, out)
	}
	var col []string
	for _, l := range lines[1 : len(lines)-1] { // a header, then the rows, then "(N rows)"
		col = append(col, strings.Split(l, "\t")[0])
	}
	return col
}
