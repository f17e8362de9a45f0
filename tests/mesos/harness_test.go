package mesos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
)

// The peloton binary is built once, on first use, so that the benchmark
// (which does not need it) runs without it.
var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	testkit.UseDevTokens()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// pelotonBinary returns the built binary, failing t if it does not build.
func pelotonBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "peloton-mesos-e2e")
		if buildErr != nil {
			return
		}
		binary = filepath.Join(binDir, "peloton")
		build := exec.Command("go", "build", "-o", binary, "github.com/peloton-federated/peloton/cmd/peloton")
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building peloton: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// master is an emulated Mesos master on a loopback port.
type master struct {
	*mesostest.Master
	url string
}

func startMaster(t *testing.T, n int, cpu float64) *master {
	t.Helper()
	specs := make([]mesostest.AgentSpec, n)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("agent-%d", i), CPU: cpu, MemMB: 4096, DiskMB: 10000,
			Attributes: map[string]string{"zone": fmt.Sprintf("z%d", i%2)}}
	}
	return startMasterWith(t, specs...)
}

// startMasterWith starts a master with these agents that keeps every
// TaskInfo it accepted.
func startMasterWith(t *testing.T, specs ...mesostest.AgentSpec) *master {
	t.Helper()
	m := mesostest.New(mesostest.Config{HeartbeatInterval: time.Second, AllocationInterval: 20 * time.Millisecond, UpdateRetry: 2 * time.Second,
		KeepTaskInfos: true})
	if err := m.AddAgents(specs...); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); m.Run(ctx) }()
	go func() { defer wg.Done(); srv.Serve(l) }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		wg.Wait()
	})
	return &master{Master: m, url: "http://" + l.Addr().String()}
}

// server is a running `peloton dev`.
type server struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
	log  *testkit.LogBuffer
	done chan error
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startDev starts `peloton dev` with one Mesos cluster "dc1" and waits
// until it is healthy; params are added to the cluster's --hosts spec.
func startDev(t *testing.T, dataDir string, m *master, params ...string) *server {
	t.Helper()
	s := &server{t: t, addr: freeAddr(t), log: &testkit.LogBuffer{}, done: make(chan error, 1)}
	hosts := "mesos:dc1,master=" + m.url + ",hold=2s,launch-wait=3s,failover=1m"
	for _, p := range params {
		hosts += "," + p
	}
	s.cmd = exec.Command(pelotonBinary(t), "dev", "--data-dir", dataDir, "--addr", s.addr, "--hosts", hosts)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(s.stop)
	waitFor(t, 30*time.Second, "peloton dev healthy", func() bool {
		select {
		case err := <-s.done:
			t.Fatalf("peloton dev exited early: %v\n%s", err, s.log)
		default:
		}
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return s
}

// stop interrupts the server as Ctrl-C does and waits for it to exit.
func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			s.t.Errorf("peloton dev did not stop cleanly: %v\n%s", err, s.log)
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("peloton dev did not stop within 20s\n%s", s.log)
	}
}

// cli runs the peloton CLI against the server.
func (s *server) cli(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pelotonBinary(s.t), args...)
	cmd.Env = append(os.Environ(), "PELOTON_ADDR="+s.addr)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("peloton %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func (s *server) getJSON(path string, out any) {
	s.t.Helper()
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		s.t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

type taskJSON struct {
	Instance uint32            `json:"instance"`
	State    string            `json:"state"`
	Run      uint32            `json:"run"`
	Host     string            `json:"host"`
	Health   string            `json:"health"`
	Ready    string            `json:"ready"`
	Reason   string            `json:"reason"`
	Message  string            `json:"message"`
	Ports    map[string]uint32 `json:"ports"`
}

func (s *server) createJob(spec string) string {
	s.t.Helper()
	resp, err := http.Post("http://"+s.addr+"/v1/jobs", "application/json", strings.NewReader(spec))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.Job.ID == "" {
		s.t.Fatalf("POST /v1/jobs: %d %s", resp.StatusCode, body)
	}
	return out.Job.ID
}

func (s *server) jobState(id string) string {
	var out struct {
		Job struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"job"`
	}
	s.getJSON("/v1/jobs/"+id, &out)
	return out.Job.Status.State
}

func (s *server) tasks(id string) []taskJSON {
	var out struct {
		Tasks []taskJSON `json:"tasks"`
	}
	s.getJSON("/v1/jobs/"+id+"/tasks", &out)
	return out.Tasks
}

func (s *server) waitJob(id, state string, within time.Duration) {
	s.t.Helper()
	waitFor(s.t, within, "job "+id+" "+state, func() bool {
		got := s.jobState(id)
		if got != state && strings.HasPrefix(got, "JOB_STATE_") && (strings.HasSuffix(got, "FAILED") || strings.HasSuffix(got, "KILLED")) {
			s.t.Fatalf("job %s ended %s; tasks %+v\n%s", id, got, s.tasks(id), s.log)
		}
		return got == state
	})
}

// waitFor polls cond until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jobSpec(name string, instances int, cpu float64, duration string) string {
	return fmt.Sprintf(`{"name":%q,"instances":%d,"task":{"command":"true","env":{"PELOTON_SIM_DURATION":%q},"resources":{"cpu":%g,"memMb":64}}}`,
		name, instances, duration, cpu)
}
