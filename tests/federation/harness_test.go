package federation

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// member is one `peloton server` process of a region. Its API speaks
// HTTPS trusting the federation's CA, with an admin's token.
type member struct {
	*testkit.API
	t      testing.TB
	region string
	addr   string
	config string
	proc   *testkit.Process
}

// start starts the member's server and waits until it is healthy.
func (m *member) start() {
	m.t.Helper()
	m.proc = testkit.StartServerProcess(m.t, binary, m.config, testkit.Options{Name: "server " + m.region})
	m.proc.WaitHealthy(m.Client, m.URL, 30*time.Second)
}

// kill stops the process with SIGKILL, as a crash would.
func (m *member) kill() { m.proc.Kill() }

// federation starts one server per region on 127.0.0.1, .2, .3.
func startFederation(t testing.TB, regions ...string) map[string]*member {
	return startFederationWith(t, fedTuning{profile: "local", suspect: "1s", fail: "3s", recover: "1s", hosts: "sim,hosts=20,cpu=8,mem=65536,duration=2s"}, regions...)
}

// fedTuning is the gossip profile, health thresholds and hosts of a test
// federation.
type fedTuning struct {
	profile, suspect, fail, recover, hosts string
}

// Every region runs secured: TLS on the API port with the region's
// certificate, mutual TLS between regions, encrypted gossip, and an admin
// token for the test.
func startFederationWith(t testing.TB, tune fedTuning, regions ...string) map[string]*member {
	t.Helper()
	dir := t.TempDir()
	lab := testkit.NewLab(t, binary, filepath.Join(dir, "pki"), testkit.LabSpec{Regions: regions,
		Hosts: []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}, Tokens: []string{"admin"}, Policy: testkit.AdminPolicy})
	gossipKey, client := testkit.GossipKey(t), lab.HTTPClient(t, 30*time.Second)
	var seed string
	out := map[string]*member{}
	for i, region := range regions {
		ip := fmt.Sprintf("127.0.0.%d", i+1)
		addr := fmt.Sprintf("%s:%d", ip, testkit.FreePort(t, ip))
		gport := testkit.FreePort(t, ip)
		join := ""
		if i == 0 {
			seed = fmt.Sprintf("%s:%d", ip, gport)
		} else {
			join = fmt.Sprintf("join: [%q], ", seed)
		}
		cfg := fmt.Sprintf(`region: %s
addr: %s
dataDir: %s
hosts: [%q]
gossip: {node: %s-0, bind: "%s:%d", %sprofile: %s, encryptKey: %q}
health: {suspectAfter: %s, failAfter: %s, recoverAfter: %s}
log: {level: info}
%s
%s
`, region, addr, filepath.Join(dir, region), tune.hosts, region, ip, gport, join, tune.profile, gossipKey, tune.suspect, tune.fail, tune.recover,
			lab.TLSConfig(region), lab.AuthConfig(""))
		path := filepath.Join(dir, region+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		m := &member{API: &testkit.API{T: t, URL: "https://" + addr, Client: client, Token: lab.Tokens["admin"]},
			t: t, region: region, addr: addr, config: path}
		m.start()
		out[region] = m
	}
	return out
}

var waitFor = testkit.WaitFor
