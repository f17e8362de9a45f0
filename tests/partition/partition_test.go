// Package partition cuts a region off the federation with network
// namespaces (not killing it) and checks what the federation does: the
// others declare it failed and relocate its work, the cut-off region fences
// itself, and after healing no job runs in two regions.
package partition

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// The test hosts: one network namespace per region on a bridge in a
// namespace of their own; the test reaches them through a veth into the
// bridge. Addresses are the test's own, inside namespaces it creates.
const subnet = "10.213.7"

func sh(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func shQuiet(args ...string) { _ = exec.Command(args[0], args[1:]...).Run() }

// network builds the namespaces; suffix keeps names unique per run.
type network struct {
	t      *testing.T
	suffix string
}

func (n *network) ns(region string) string   { return "pel" + region + n.suffix }
func (n *network) link(region string) string { return "pv" + region + n.suffix }

func needNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root (network namespaces)", "run the partition tests as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Missing(t, "iproute2 (ip)", "apt-get install iproute2")
	}
}

func newNetwork(t *testing.T, regions []string) *network {
	n := &network{t: t, suffix: fmt.Sprint(os.Getpid() % 10000)}
	br := "pbr" + n.suffix
	hub := "pelhub" + n.suffix
	t.Cleanup(func() {
		for _, r := range regions {
			shQuiet("ip", "netns", "del", n.ns(r))
		}
		shQuiet("ip", "netns", "del", hub)
		shQuiet("ip", "link", "del", "pth"+n.suffix)
	})
	sh(t, "ip", "netns", "add", hub)
	sh(t, "ip", "-n", hub, "link", "add", br, "type", "bridge")
	sh(t, "ip", "-n", hub, "link", "set", br, "up")
	// The test's own door into the bridge.
	sh(t, "ip", "link", "add", "pth"+n.suffix, "type", "veth", "peer", "name", "pthb"+n.suffix)
	sh(t, "ip", "link", "set", "pthb"+n.suffix, "netns", hub)
	sh(t, "ip", "-n", hub, "link", "set", "pthb"+n.suffix, "master", br, "up")
	sh(t, "ip", "addr", "add", subnet+".254/24", "dev", "pth"+n.suffix)
	sh(t, "ip", "link", "set", "pth"+n.suffix, "up")
	for i, r := range regions {
		ns := n.ns(r)
		sh(t, "ip", "netns", "add", ns)
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
		sh(t, "ip", "link", "add", n.link(r), "type", "veth", "peer", "name", n.link(r)+"b")
		sh(t, "ip", "link", "set", n.link(r), "netns", ns)
		sh(t, "ip", "link", "set", n.link(r)+"b", "netns", hub)
		sh(t, "ip", "-n", hub, "link", "set", n.link(r)+"b", "master", br, "up")
		sh(t, "ip", "-n", ns, "addr", "add", fmt.Sprintf("%s.%d/24", subnet, i+1), "dev", n.link(r))
		sh(t, "ip", "-n", ns, "link", "set", n.link(r), "up")
	}
	return n
}

// cut takes a region's link to the bridge down (or up again).
func (n *network) cut(region string, cut bool) {
	state := "up"
	if cut {
		state = "down"
	}
	sh(n.t, "ip", "-n", "pelhub"+n.suffix, "link", "set", n.link(region)+"b", state)
}

// member is a region's `peloton server`, started in its namespace.
type member struct {
	*testkit.API // HTTPS trusting the federation's CA, an admin's token
	addr         string
	proc         *testkit.Process
}

func TestRegionCutOff(t *testing.T) {
	needNamespaces(t)
	regions := []string{"a", "b", "c"}
	net := newNetwork(t, regions)
	dir := t.TempDir()
	// Secured as in production: TLS with the region's certificate,
	// mutual TLS between regions, encrypted gossip, an admin token.
	var ips []string
	for i := range regions {
		ips = append(ips, fmt.Sprintf("%s.%d", subnet, i+1))
	}
	lab := testkit.NewLab(t, binary, filepath.Join(dir, "pki"), testkit.LabSpec{Regions: regions, Hosts: ips,
		Tokens: []string{"admin"}, Policy: testkit.AdminPolicy})
	token, key, client := lab.Tokens["admin"], testkit.GossipKey(t), lab.HTTPClient(t, 5*time.Second)
	// A cut leaves connections half open: every call dials afresh.
	client.Transport.(*http.Transport).DisableKeepAlives = true
	members := map[string]*member{}
	for i, r := range regions {
		ip := ips[i]
		join := ""
		if i > 0 {
			join = fmt.Sprintf("join: [\"%s.1:7946\"], ", subnet)
		}
		cfg := fmt.Sprintf(`region: %s
addr: %s:5390
dataDir: %s
hosts: ["sim,hosts=10,cpu=8,mem=65536,duration=1h"]
gossip: {node: %s-0, bind: "%s:7946", %sprofile: local, encryptKey: %q}
health: {suspectAfter: 1s, failAfter: 3s, recoverAfter: 1s}
%s
%s
`, r, ip, filepath.Join(dir, r), r, ip, join, key, lab.TLSConfig(r), lab.AuthConfig(""))
		path := filepath.Join(dir, r+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		addr := ip + ":5390"
		cmd := exec.Command("ip", "netns", "exec", net.ns(r), binary, "server", "--config", path)
		members[r] = &member{API: &testkit.API{T: t, URL: "https://" + addr, Client: client, Token: token}, addr: addr,
			proc: testkit.StartWith(t, cmd, testkit.Options{Name: "server " + r, Stop: testkit.ServerStop, LogLines: 25})}
	}
	a, c := members["a"], members["c"]
	health := func(m *member) map[string]string {
		h, _ := m.Regions()
		return h
	}
	waitFor(t, 60*time.Second, "three regions alive", func() bool {
		h := health(a)
		return h["a"] == "alive" && h["b"] == "alive" && h["c"] == "alive"
	})
	var originals []string
	for i := 0; i < 2; i++ {
		originals = append(originals, a.CreateJob(fmt.Sprintf(`{"name":"c%d","region":"c","preemptible":true,"failover":{"mode":"any"},"instances":4,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`, i)))
	}
	jobsAt := func(m *member) map[string]string {
		var out struct{ Jobs []testkit.Job }
		if err := m.Get("/v1/jobs", &out); err != nil {
			return nil
		}
		st := map[string]string{}
		for _, j := range out.Jobs {
			st[j.ID] = j.Status.State + "@" + j.Status.Region
		}
		return st
	}
	waitFor(t, 20*time.Second, "c's jobs running", func() bool {
		st := jobsAt(c)
		return st[originals[0]] == "JOB_STATE_RUNNING@c" && st[originals[1]] == "JOB_STATE_RUNNING@c"
	})
	time.Sleep(6 * time.Second) // progress is replicated every few seconds

	// Cut c off, alive.
	net.cut("c", true)
	detected := waitFor(t, 60*time.Second, "c declared failed at a", func() bool { return health(a)["c"] == "failed" })
	t.Logf("c declared failed %.1fs after the cut", detected.Seconds())
	waitFor(t, 30*time.Second, "c's jobs relocated and running in a or b", func() bool {
		n := 0
		for _, v := range jobsAt(a) {
			if strings.HasPrefix(v, "JOB_STATE_RUNNING@") && !strings.HasSuffix(v, "@c") {
				n++
			}
		}
		return n >= 2
	})
	waitFor(t, 30*time.Second, "c fencing itself", func() bool {
		return strings.Contains(c.proc.Output(), `why="no other region is reachable"`)
	})
	// While cut off, c launches nothing new: a job created there stays
	// unlaunched (its gateway is reachable from inside its namespace only).
	auth := []string{"--ca", lab.CA(), "--token", token}
	probe := exec.Command("ip", "netns", "exec", net.ns("c"), binary, "job", "create", "--addr", c.addr, "-f", "-")
	probe.Args = append(probe.Args, auth...)
	probe.Stdin = strings.NewReader(`{"name":"while-cut","region":"c","preemptible":true,"instances":2,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`)
	out, err := probe.CombinedOutput()
	if err != nil {
		t.Fatalf("create inside c while cut: %v\n%s", err, out)
	}
	cutJob := strings.TrimSpace(string(out))
	time.Sleep(3 * time.Second)
	inC := exec.Command("ip", "netns", "exec", net.ns("c"), binary, "task", "list", cutJob, "--addr", c.addr)
	inC.Args = append(inC.Args, auth...)
	listing, err := inC.CombinedOutput()
	if err != nil {
		t.Fatalf("task list inside c while cut: %v\n%s", err, listing)
	}
	if strings.Contains(string(listing), "RUNNING") || strings.Contains(string(listing), "LAUNCHING") {
		t.Fatalf("fenced region launched work while cut off:\n%s", listing)
	}

	// Heal: c comes back, stops its copies of what moved; no job in two
	// regions.
	net.cut("c", false)
	waitFor(t, 60*time.Second, "c alive again at a", func() bool { return health(a)["c"] == "alive" })
	waitFor(t, 30*time.Second, "c's originals stopped", func() bool {
		st := jobsAt(c)
		return strings.HasPrefix(st[originals[0]], "JOB_STATE_KILLED") && strings.HasPrefix(st[originals[1]], "JOB_STATE_KILLED")
	})
	running := map[string]int{}
	for _, v := range jobsAt(a) {
		if strings.HasPrefix(v, "JOB_STATE_RUNNING@") {
			running[strings.TrimPrefix(v, "JOB_STATE_RUNNING@")]++
		}
	}
	t.Logf("running jobs per region after healing: %v", running)
}

var waitFor = testkit.WaitFor
