package ha

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// cassandraNode is a throwaway Cassandra of this test, so it may be
// stopped without disturbing other tests.
type cassandraNode struct {
	script, dir       string
	port, storagePort int
}

func (n *cassandraNode) run(t *testing.T, command string, flags ...string) {
	t.Helper()
	args := []string{command, "--dir", n.dir}
	if command == "start" {
		args = append(args, "--port", fmt.Sprint(n.port), "--storage-port", fmt.Sprint(n.storagePort))
	}
	out, err := exec.Command(n.script, append(args, flags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("cassandra.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Cassandra stops while the server runs: API calls that need the store
// answer Unavailable with a clear message and change nothing; when it comes
// back, the server carries on by itself.
func TestCassandraOutage(t *testing.T) {
	cassandraAddr(t) // CI provides Cassandra (jars cached); this test runs its own node
	script, _ := filepath.Abs("../../deploy/cassandra/cassandra.sh")
	n := &cassandraNode{script: script, dir: t.TempDir(), port: testkit.FreePort(t, "127.0.0.1"), storagePort: testkit.FreePort(t, "127.0.0.1")}
	n.run(t, "start", "--clean")
	t.Cleanup(func() { n.run(t, "stop", "--kill") })

	dir := t.TempDir()
	m := &member{t: t, name: "solo", addr: testkit.FreeAddr(t)}
	m.config = filepath.Join(dir, "solo.yaml")
	cfg := fmt.Sprintf(`region: r
addr: %s
dataDir: %s
hosts: ["sim,hosts=4,cpu=8,mem=65536,duration=1s"]
store: {kind: cassandra, cassandra: {hosts: ["127.0.0.1:%d"], keyspace: peloton, migrate: true}}
`, m.addr, filepath.Join(dir, "data"), n.port)
	if err := os.WriteFile(m.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	m.start()
	t.Cleanup(m.stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- server:\n%s", lastLines(m.log.String(), 40))
		}
	})
	waitFor(t, 60*time.Second, "the server healthy", func() bool {
		resp, err := http.Get("http://" + m.addr + "/healthz")
		return err == nil && resp.StatusCode == 200
	})
	post := func() (int, string) {
		resp, err := http.Post("http://"+m.addr+"/v1/jobs", "application/json", strings.NewReader(
			`{"name":"j","instances":20,"preemptible":true,"task":{"command":"sim","resources":{"cpu":0.5,"memMb":1}}}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(); code != 200 {
		t.Fatalf("create before the outage: %d %s", code, body)
	}
	jobsNow := func() int {
		var out struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := m.get("/v1/jobs", &out); err != nil {
			t.Fatal(err)
		}
		return len(out.Jobs)
	}
	before := jobsNow()

	n.run(t, "stop")
	code, body := post()
	t.Logf("create during the outage: %d %s", code, body)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "unavailable") {
		t.Fatalf("create during the outage: %d %s, want 503 Unavailable naming the store", code, body)
	}
	if got := jobsNow(); got != before {
		t.Fatalf("a job refused during the outage was kept: %d jobs, had %d", got, before)
	}

	n.run(t, "start")
	waitFor(t, 90*time.Second, "the server accepting jobs again", func() bool {
		code, _ := post()
		return code == 200
	})
	waitFor(t, 90*time.Second, "every job succeeded", func() bool {
		var out struct {
			Jobs []struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"jobs"`
		}
		if err := m.get("/v1/jobs", &out); err != nil {
			return false
		}
		for _, j := range out.Jobs {
			if j.Status.State != "JOB_STATE_SUCCEEDED" {
				return false
			}
		}
		return len(out.Jobs) == before+1
	})
}
