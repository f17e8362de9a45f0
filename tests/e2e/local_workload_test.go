package e2e

import (
	"bufio"
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

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// examples/web-local.yaml on the local host manager: each of its two
// instances runs a web server (python3 -m http.server) on its named port
// and is HEALTHY by its HTTP health check; once the endpoint of instance 0
// fails (its healthz file removed, GET returns 404) that instance turns
// UNHEALTHY and is restarted as run 2, which is HEALTHY again.
func TestLocalServiceHealthCheckRestartsUnhealthyInstance(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.Missing(t, "python3", "examples/web-local.yaml serves with python3 -m http.server")
	}
	dir := t.TempDir()
	// Two host ports, free now, one per instance: the restarted run gets
	// its instance's port back.
	ports := []int{testkit.FreePort(t, "127.0.0.1"), testkit.FreePort(t, "127.0.0.1")}
	for ports[1] == ports[0] {
		ports[1] = testkit.FreePort(t, "127.0.0.1")
	}
	ranges := fmt.Sprintf("%d-%d|%d-%d", ports[0], ports[0], ports[1], ports[1])
	s := startDev(t, dir, "--hosts", "local,ports="+ranges)
	id := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "web-local.yaml")))

	events := watchTasks(t, s, id)
	port := map[uint32]uint32{}
	for len(port) < 2 {
		tk := events.waitFor(t, "both instances HEALTHY", func(tk testkit.Task) bool {
			return tk.Run == 1 && tk.Health == "HEALTH_STATE_HEALTHY" && port[tk.Instance] == 0
		})
		port[tk.Instance] = tk.Ports["http"]
	}
	if !(port[0] == uint32(ports[0]) && port[1] == uint32(ports[1])) && !(port[0] == uint32(ports[1]) && port[1] == uint32(ports[0])) {
		t.Errorf("instances got ports %v, want %v", port, ports)
	}
	if got := getBody(t, port[0], "/healthz"); got != "ok\n" {
		t.Errorf("the task's endpoint says %q", got)
	}
	if out := s.MustCLI("task", "get", id, "0"); !hasField(out, "Health", "HEALTHY") || !hasField(out, "Ports", fmt.Sprintf("http=%d", port[0])) {
		t.Errorf("task get:\n%s", out)
	}
	if out := s.MustCLI("task", "list", id); strings.Count(out, "HEALTHY") != 2 {
		t.Errorf("task list:\n%s", out)
	}

	// Break the endpoint of instance 0's first run.
	if err := os.Remove(filepath.Join(dir, "hosts", "local", "runs", id+"-0-1", "sandbox", "healthz")); err != nil {
		t.Fatal(err)
	}
	events.waitFor(t, "instance 0 UNHEALTHY", func(tk testkit.Task) bool {
		return tk.Instance == 0 && tk.Run == 1 && tk.Health == "HEALTH_STATE_UNHEALTHY"
	})
	second := events.waitFor(t, "instance 0 run 2 HEALTHY", func(tk testkit.Task) bool {
		return tk.Instance == 0 && tk.Run == 2 && tk.Health == "HEALTH_STATE_HEALTHY"
	})
	if second.State != "TASK_STATE_RUNNING" || second.Ports["http"] != port[0] {
		t.Errorf("restarted run: %+v, want RUNNING on port %d", second, port[0])
	}
	if got := getBody(t, port[0], "/healthz"); got != "ok\n" {
		t.Errorf("the restarted task's endpoint says %q", got)
	}
	if out := s.MustCLI("task", "get", id, "0"); !hasField(out, "Health", "HEALTHY") || !hasField(out, "Run", "2") {
		t.Errorf("task get after the restart:\n%s", out)
	}
	for _, tk := range events.seen {
		if tk.Instance == 1 && tk.Run != 1 {
			t.Errorf("instance 1 was restarted too: %+v", tk)
		}
	}
	// Stop the servers before the test ends: tasks outlive `peloton dev`.
	s.MustCLI("job", "stop", id)
	events.waitKilled(t, 2)
}

// hasField reports whether `task get` output has a line "<name>:  <value>".
func hasField(out, name, value string) bool {
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == name && strings.TrimSpace(v) == value {
			return true
		}
	}
	return false
}

func getBody(t *testing.T, port uint32, path string) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// taskEvents are the task events of one job, read from the event stream.
type taskEvents struct {
	ch   chan testkit.Task
	seen []testkit.Task
}

// watchTasks follows the event stream of a job until the test ends.
func watchTasks(t *testing.T, s *server, job string) *taskEvents {
	t.Helper()
	resp, err := http.Get("http://" + s.Addr + "/v1/events?jobId=" + job)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ev := &taskEvents{ch: make(chan testkit.Task, 1024)}
	go func() {
		defer close(ev.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e struct {
				Result struct {
					Task *testkit.Task `json:"task"`
				} `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Result.Task != nil {
				ev.ch <- *e.Result.Task
			}
		}
	}()
	return ev
}

// waitFor returns the first task event, from now on, that cond accepts.
func (ev *taskEvents) waitFor(t *testing.T, what string, cond func(testkit.Task) bool) testkit.Task {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case tk, ok := <-ev.ch:
			if !ok {
				t.Fatalf("event stream ended waiting for %s; seen %+v", what, ev.seen)
			}
			ev.seen = append(ev.seen, tk)
			if cond(tk) {
				return tk
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s; seen %+v", what, ev.seen)
		}
	}
}

// examples/stateful.yaml on the local host manager: each instance's volume
// is a directory it finds in PELOTON_VOLUME_DATA; when a run ends the
// instance starts again with the same directory and its data, and deleting
// the job removes the directories.
func TestLocalStatefulVolumesOutliveRunsUntilDeleted(t *testing.T) {
	dir := t.TempDir()
	s := startDev(t, dir)
	id := strings.TrimSpace(s.MustCLI("job", "create", "-f", repoFile("examples", "stateful.yaml")))
	events := watchTasks(t, s, id)
	logHas := func(instance, want string) func() bool {
		return func() bool { return strings.Contains(s.MustCLI("task", "logs", id, instance), want) }
	}
	waitFor(t, 30*time.Second, "instance 0 run 1", logHas("0", "run 1"))
	waitFor(t, 30*time.Second, "instance 1 run 1", logHas("1", "run 1"))

	// End instance 0's run from outside: it starts again on its volume.
	runDir := filepath.Join(dir, "hosts", "local", "runs", id+"-0-1")
	var started struct {
		Child struct{ Pid int } `json:"child"`
	}
	data, err := os.ReadFile(filepath.Join(runDir, "started"))
	if err != nil || json.Unmarshal(data, &started) != nil || started.Child.Pid <= 0 {
		t.Fatalf("started record of run 1: %s, %v", data, err)
	}
	if err := syscall.Kill(started.Child.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	events.waitFor(t, "instance 0 run 2 RUNNING", func(tk testkit.Task) bool {
		return tk.Instance == 0 && tk.Run == 2 && tk.State == "TASK_STATE_RUNNING"
	})
	waitFor(t, 30*time.Second, "instance 0 counting its second run on its volume", logHas("0", "run 2"))
	volumes := filepath.Join(dir, "hosts", "local", "volumes")
	for instance, want := range map[string]string{"0": "2\n", "1": "1\n"} {
		got, err := os.ReadFile(filepath.Join(volumes, id+"-"+instance+"-data", "runs"))
		if err != nil || string(got) != want {
			t.Errorf("volume of instance %s holds %q, %v; want %q", instance, got, err, want)
		}
	}

	s.MustCLI("job", "stop", id)
	events.waitKilled(t, 2)
	if entries, _ := os.ReadDir(volumes); len(entries) != 2 {
		t.Errorf("stopping the job left %d volumes, want both kept", len(entries))
	}
	s.MustCLI("job", "delete", id)
	waitFor(t, 30*time.Second, "volumes removed with the job", func() bool {
		entries, err := os.ReadDir(volumes)
		return err == nil && len(entries) == 0
	})
}

// waitKilled waits until n instances were reported KILLED.
func (ev *taskEvents) waitKilled(t *testing.T, n int) {
	t.Helper()
	killed := map[uint32]bool{}
	for len(killed) < n {
		tk := ev.waitFor(t, fmt.Sprintf("%d instances KILLED", n), func(tk testkit.Task) bool { return tk.State == "TASK_STATE_KILLED" })
		killed[tk.Instance] = true
	}
}
