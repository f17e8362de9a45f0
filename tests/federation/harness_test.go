package federation

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// member is one `peloton server` process of a region.
type member struct {
	t      testing.TB
	region string
	addr   string
	config string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	done   chan error
	// client speaks HTTPS to the member, trusting the federation's CA;
	// token is an admin's.
	client *http.Client
	token  string
}

func (m *member) start() {
	m.t.Helper()
	m.log = &bytes.Buffer{}
	m.done = make(chan error, 1)
	m.cmd = exec.Command(binary, "server", "--config", m.config)
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	go func() { m.done <- m.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := m.client.Get("https://" + m.addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-m.done:
			m.t.Fatalf("server %s exited early: %v\n%s", m.region, err, m.log)
		default:
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("server %s not healthy after 30s\n%s", m.region, m.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the process with SIGKILL, as a crash would.
func (m *member) kill() {
	if m.cmd == nil || m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.done
}

func (m *member) stop() {
	if m.cmd == nil || m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(15 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

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
	pki, token, gossipKey, client := securedLab(t, dir, regions)
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
tls: {cert: %s, key: %s, ca: %s}
auth: {tokens: %s, policy: %s}
`, region, addr, filepath.Join(dir, region), tune.hosts, region, ip, gport, join, tune.profile, gossipKey, tune.suspect, tune.fail, tune.recover,
			filepath.Join(pki, region+".crt"), filepath.Join(pki, region+".key"), filepath.Join(pki, "ca.crt"),
			filepath.Join(pki, "tokens.yaml"), filepath.Join(pki, "policy.yaml"))
		path := filepath.Join(dir, region+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		m := &member{t: t, region: region, addr: addr, config: path, client: client, token: token}
		m.start()
		out[region] = m
		t.Cleanup(m.stop)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range regions {
				t.Logf("--- log of %s:\n%s", r, lastLines(out[r].log.String(), 40))
			}
		}
	})
	return out
}

func (m *member) do(method, path, body string) (int, []byte, http.Header) {
	m.t.Helper()
	req, _ := http.NewRequest(method, "https://"+m.addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

func (m *member) getJSON(path string, v any) {
	m.t.Helper()
	code, body, _ := m.do("GET", path, "")
	if code != 200 {
		m.t.Fatalf("GET %s at %s: %d %s", path, m.region, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		m.t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// securedLab makes, with the binary, a CA and a certificate per region, an
// admin token and its policy, and a gossip key; it returns the PKI
// directory, the token, the key and an HTTPS client trusting the CA.
func securedLab(t testing.TB, dir string, regions []string) (pki, token, gossipKey string, client *http.Client) {
	t.Helper()
	pki = filepath.Join(dir, "pki")
	peloton := func(args ...string) string {
		out, err := exec.Command(binary, args...).Output()
		if err != nil {
			t.Fatalf("peloton %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	peloton("tls", "init", "--dir", pki, "--regions", strings.Join(regions, ","), "--hosts", "127.0.0.2,127.0.0.3,127.0.0.4")
	token = peloton("auth", "token", "create", "admin", "--file", filepath.Join(pki, "tokens.yaml"))
	if err := os.WriteFile(filepath.Join(pki, "policy.yaml"), []byte("bindings: [{subjects: [admin], role: admin}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 30 * time.Second}
	return pki, token, base64.StdEncoding.EncodeToString(key), client
}

var (
	waitFor   = testkit.WaitFor
	lastLines = testkit.LastLines
)
