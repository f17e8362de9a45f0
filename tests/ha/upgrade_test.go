package ha

import (
	"encoding/json"
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

// lastRelease returns the last release tag reachable from this tree's
// commit (git describe --tags --match 'v*') and the peloton binary built
// from it. The binary is built once per tag and commit, offline from the
// module cache, and kept under $PELOTON_CACHE (~/.cache/peloton)
// release/<tag>-<commit>/. A clone without tags has none: the test is
// stopped by testenv.Missing (a failure under `make test`), never passed.
func lastRelease(t *testing.T) (tag, bin string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	// The tag when the clone has it; otherwise the release's commit as
	// testdata/last-release records it (a clone made without tags still
	// holds the commit; a shallow one does not).
	var commit string
	if tag, err = git("describe", "--tags", "--abbrev=0", "--match", "v*"); err == nil && tag != "" {
		if commit, err = git("rev-list", "-n", "1", tag); err != nil {
			t.Fatalf("git rev-list %s: %v", tag, err)
		}
	} else if rec, rerr := os.ReadFile("testdata/last-release"); rerr == nil {
		if f := strings.Fields(string(rec)); len(f) == 2 {
			if _, cerr := git("cat-file", "-e", f[1]+"^{commit}"); cerr == nil {
				tag, commit = f[0], f[1]
			}
		}
	}
	if commit == "" {
		testenv.Missing(t, "the last release (git describe --tags --match 'v*' finds no tag, and the commit testdata/last-release names is not in this clone: a shallow clone)",
			"git fetch --tags --unshallow")
	}
	cache := os.Getenv("PELOTON_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(home, ".cache", "peloton")
	}
	dir := filepath.Join(cache, "release", tag+"-"+commit[:12])
	bin = filepath.Join(dir, "peloton")
	if _, err := os.Stat(bin); err == nil {
		return tag, bin
	}
	src := t.TempDir()
	archive := filepath.Join(t.TempDir(), "src.tar")
	if out, err := exec.Command("git", "-C", root, "archive", "--format=tar", "-o", archive, commit).CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", tag, err, out)
	}
	if out, err := exec.Command("tar", "-xf", archive, "-C", src).CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", tag, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	build := exec.Command("go", "build", "-ldflags", "-X github.com/peloton-federated/peloton/cmd/peloton/cli.Version="+tag,
		"-o", bin+".tmp", "./cmd/peloton")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s (%s) offline from the module cache: %v\n%s", tag, commit[:12], err, out)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s (%s) in %.0fs into %s", tag, commit[:12], time.Since(started).Seconds(), dir)
	return tag, bin
}

// version is what the region's leader says of its build (GET /v1/version,
// which a standby forwards to the leader).
func (m *member) version() string {
	var out struct {
		Version string `json:"version"`
	}
	if err := m.Get("/v1/version", &out); err != nil {
		return "unknown: " + err.Error()
	}
	return out.Version
}

// TestRollingUpgrade upgrades a running region of three members from the
// last release to this tree's binary, one member at a time: the two
// standbys first, the leader last (one takeover). Each member is stopped
// with SIGTERM, as a rolling update of a StatefulSet or a systemd restart
// does, and started again on the new binary; the next waits until it is
// healthy. Clients create jobs and read them throughout, sending a failed
// call again to the next member (failoverLoad). It fails on a call that
// failed in a way the clients do not retry, an acknowledged job lost or
// not succeeding with all its tasks, a retry that created a second job, or
// two runs of a task RUNNING at once.
func TestRollingUpgrade(t *testing.T) {
	cass := cassandraAddr(t)
	tag, old := lastRelease(t)
	keyspace := fmt.Sprintf("peloton_upgrade_%d", time.Now().UnixNano()%1e9)
	dropKeyspaceAfter(t, cass, keyspace)
	members := startRegion(t, regionSpec{members: 3, cassandra: cass, keyspace: keyspace,
		sim: "sim,hosts=50,cpu=8,mem=65536,duration=2s", extra: "ha: {leaseTTL: 3s}", bins: []string{old, old, old}})
	leaderOf := func() *member {
		for _, m := range members {
			if m.alive() && m.leading() {
				return m
			}
		}
		return nil
	}
	waitFor(t, 60*time.Second, "a leader", func() bool { return leaderOf() != nil })
	waitFor(t, 30*time.Second, "three members healthy", func() bool {
		return members[0].healthy() && members[1].healthy() && members[2].healthy()
	})
	if v := leaderOf().version(); v != tag {
		t.Fatalf("the region's leader runs %q, want the release %s", v, tag)
	}
	load := newFailoverLoad(members, "upgrade", 4)
	load.reads = []failoverCreate{}
	stopLoad := load.start(t, 3, 100*time.Millisecond)
	waitFor(t, 30*time.Second, "the first create acknowledged", func() bool { return load.firstAckAfter(0) >= 0 })
	time.Sleep(2 * time.Second)

	leader := leaderOf()
	var order []*member
	for _, m := range members {
		if m != leader {
			order = append(order, m)
		}
	}
	for _, m := range append(order, leader) {
		role := "standby"
		if m == leader {
			role = "leader"
		}
		at := load.now()
		m.stop()
		m.bin = "" // this tree's binary
		m.start()
		waitFor(t, 60*time.Second, m.name+" healthy on the new binary", m.healthy)
		var next string
		if m == leader {
			waitFor(t, 60*time.Second, "another member leading", func() bool { l := leaderOf(); return l != nil && l != m })
			next = fmt.Sprintf("; %s leads", leaderOf().name)
		}
		waitFor(t, 60*time.Second, "a create acknowledged after "+m.name+"'s restart", func() bool { return load.firstAckAfter(at) >= 0 })
		t.Logf("%s (%s) stopped and serving on the new binary %.1fs later%s; the first create sent after its stop was acknowledged %.1fs after it",
			m.name, role, (load.now() - at).Seconds(), next, (load.firstAckAfter(at) - at).Seconds())
		time.Sleep(2 * time.Second)
	}
	if v := leaderOf().version(); v == tag {
		t.Errorf("after the upgrade the leader still runs %s", v)
	}
	time.Sleep(2 * time.Second)
	stopLoad()
	s := load.summary()
	for _, f := range s.failed {
		t.Errorf("a call failed: %s", f)
	}
	rerun, dups := load.verifyJobs(t, leaderOf, 3*time.Minute)
	t.Logf("%s to this tree, one member at a time: creates acknowledged %d (%d tasks), reads %d, failed %d, attempts sent again: %s; the slowest create took %.1fs; tasks run again %d, with two runs RUNNING at once %d",
		tag, len(s.acked), len(s.acked)*load.tasks, s.reads, len(s.failed), s.retriedString(), s.slowest.Seconds(), rerun, dups)
}

// TestMixedVersionFederation runs a federation of two regions, east on the
// last release and west on this tree, joined by gossip: each sees the
// other alive, a job created at either region for the other runs there
// and succeeds, and each region's job listing shows both.
func TestMixedVersionFederation(t *testing.T) {
	tag, old := lastRelease(t)
	dir := t.TempDir()
	type region struct {
		name string
		m    *member
	}
	var seed string
	var regions []region
	for i, name := range []string{"east", "west"} {
		m := newMember(t, name)
		if name == "east" {
			m.bin = old
		}
		gossip := testkit.FreeAddr(t)
		join := ""
		if i == 0 {
			seed = gossip
		} else {
			join = fmt.Sprintf("join: [%q], ", seed)
		}
		m.config = filepath.Join(dir, name+".yaml")
		cfg := fmt.Sprintf(`region: %s
addr: %s
dataDir: %s
hosts: ["sim,hosts=10,cpu=8,mem=65536,duration=1s"]
gossip: {node: %s-0, bind: %q, %sprofile: local}
health: {suspectAfter: 1s, failAfter: 3s, recoverAfter: 1s}
`, name, m.addr, filepath.Join(dir, name), name, gossip, join)
		if err := os.WriteFile(m.config, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		m.start()
		regions = append(regions, region{name, m})
	}
	east, west := regions[0].m, regions[1].m
	waitFor(t, 60*time.Second, "each region seeing both alive", func() bool { return east.RegionsAlive() == 2 && west.RegionsAlive() == 2 })
	if v := east.version(); v != tag {
		t.Fatalf("east runs %q, want the release %s", v, tag)
	}
	if v := west.version(); v == tag {
		t.Fatalf("west runs the release %s, want this tree", v)
	}
	create := func(at *member, region string) string {
		data, _, err := send(at, "POST", "/v1/jobs", fmt.Sprintf(
			`{"name":"mixed-%s","region":%q,"instances":3,"task":{"command":"sim","resources":{"cpu":0.5,"memMb":1}}}`, region, region))
		if err != nil {
			t.Fatalf("create at %s for %s: %v", at.name, region, err)
		}
		var out struct {
			Job struct {
				ID string `json:"id"`
			} `json:"job"`
		}
		if err := json.Unmarshal(data, &out); err != nil || out.Job.ID == "" {
			t.Fatalf("create at %s for %s: %s", at.name, region, data)
		}
		return out.Job.ID
	}
	jobs := map[string]string{create(east, "west"): "west", create(west, "east"): "east"}
	for id, region := range jobs {
		for _, at := range []*member{east, west} {
			waitFor(t, 60*time.Second, fmt.Sprintf("job %s, in %s, succeeded as read at %s", id, region, at.name), func() bool {
				var out struct {
					Job struct {
						Status struct {
							State  string `json:"state"`
							Region string `json:"region"`
						} `json:"status"`
					} `json:"job"`
				}
				return at.Get("/v1/jobs/"+id, &out) == nil && out.Job.Status.State == "JOB_STATE_SUCCEEDED" && out.Job.Status.Region == region
			})
		}
	}
	for _, at := range []*member{east, west} {
		var list struct {
			Jobs []struct {
				ID string `json:"id"`
			} `json:"jobs"`
		}
		if err := at.Get("/v1/jobs", &list); err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, j := range list.Jobs {
			if _, ok := jobs[j.ID]; ok {
				seen++
			}
		}
		if seen != len(jobs) {
			t.Errorf("the job listing at %s shows %d of the 2 jobs", at.name, seen)
		}
	}
	t.Logf("east on %s and west on %s: both alive to each other; a job created at each for the other ran there and succeeded; each listing shows both", tag, west.version())
}
