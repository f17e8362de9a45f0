package mesos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// A batch job runs to SUCCEEDED on emulated Mesos agents, and `peloton
// host list` shows the agents with their cluster and state, DRAINING under
// maintenance.
func TestBatchJobSucceedsOnMesosAgents(t *testing.T) {
	m := startMaster(t, 4, 2)
	s := startDev(t, t.TempDir(), m)
	id := s.CreateJob(jobSpec("mesos-batch", 8, 1, "300ms"))
	s.waitJob(id, "JOB_STATE_SUCCEEDED", time.Minute)
	for _, tk := range s.Tasks(id) {
		if tk.State != "TASK_STATE_SUCCEEDED" || !strings.HasPrefix(tk.Host, "agent-") {
			t.Errorf("task %+v", tk)
		}
	}
	if st := m.Stats(); st.TasksLaunched != 8 || st.TasksFinished != 8 || st.BadRequests != 0 {
		t.Errorf("master saw %+v", st)
	}

	if err := m.StartMaintenance("S2", time.Now().Add(time.Hour), time.Hour); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "agent-2 draining in host list", func() bool {
		for _, line := range strings.Split(s.MustCLI("host", "list", "--cluster", "dc1"), "\n") {
			if strings.Contains(line, "dc1/agent-2") && strings.Contains(line, "DRAINING") {
				return true
			}
		}
		return false
	})
	out := s.MustCLI("host", "list")
	for _, want := range []string{"dc1/agent-0", "dc1/agent-1", "dc1/agent-3", "mesos", "UP"} {
		if !strings.Contains(out, want) {
			t.Errorf("host list lacks %q:\n%s", want, out)
		}
	}
}

// An agent removed while the job runs: its task is LOST and runs again on
// another agent; the job still succeeds.
func TestRemovedAgentTasksRerunElsewhere(t *testing.T) {
	m := startMaster(t, 3, 1)
	s := startDev(t, t.TempDir(), m)
	id := s.CreateJob(jobSpec("mesos-agent-loss", 3, 1, "3s"))
	var victim testkit.Task
	waitFor(t, time.Minute, "all instances running", func() bool {
		tasks := s.Tasks(id)
		running := 0
		for _, tk := range tasks {
			if tk.State == "TASK_STATE_RUNNING" {
				running++
				victim = tk
			}
		}
		return running == 3
	})
	agentID := "S" + strings.TrimPrefix(victim.Host, "agent-")
	if err := m.RemoveAgent(agentID); err != nil {
		t.Fatal(err)
	}
	s.waitJob(id, "JOB_STATE_SUCCEEDED", time.Minute)
	for _, tk := range s.Tasks(id) {
		if tk.Instance != victim.Instance {
			continue
		}
		if tk.Run <= victim.Run || tk.Host == victim.Host {
			t.Errorf("instance %d after its agent was removed: %+v (was %+v)", tk.Instance, tk, victim)
		}
	}
	// The removed agent is no longer up: it is gone from the list or shown
	// DOWN while the shard remembers it.
	out := s.MustCLI("host", "list")
	if !strings.Contains(out, "dc1/agent-") {
		t.Errorf("host list shows no agents:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[len(f)-1] == "dc1/"+victim.Host && f[3] != "DOWN" {
			t.Errorf("host list after removing %s shows it %s:\n%s", victim.Host, f[3], out)
		}
	}
}

// peloton restarted mid-job re-subscribes as the same framework,
// reconciles, and the job completes without any task launched twice.
func TestRestartMidJobKeepsFrameworkAndTasks(t *testing.T) {
	m := startMaster(t, 4, 2)
	dir := t.TempDir()
	s := startDev(t, dir, m)
	id := s.CreateJob(jobSpec("mesos-restart", 6, 1, "4s"))
	waitFor(t, time.Minute, "instances running", func() bool {
		n := 0
		for _, tk := range s.Tasks(id) {
			if tk.State == "TASK_STATE_RUNNING" {
				n++
			}
		}
		return n == 6
	})
	frameworks := m.FrameworkIDs()
	if len(frameworks) != 1 {
		t.Fatalf("frameworks before restart: %v", frameworks)
	}
	s.Stop()
	waitFor(t, 10*time.Second, "master sees the framework disconnected", func() bool { return !m.Subscribed(frameworks[0]) })

	s2 := startDev(t, dir, m)
	waitFor(t, 20*time.Second, "re-subscribed", func() bool { return m.Subscribed(frameworks[0]) })
	s2.waitJob(id, "JOB_STATE_SUCCEEDED", time.Minute)
	if got := m.FrameworkIDs(); len(got) != 1 || got[0] != frameworks[0] {
		t.Errorf("frameworks after restart: %v, want %v", got, frameworks)
	}
	if st := m.Stats(); st.TasksLaunched != 6 {
		t.Errorf("master launched %d tasks for 6 instances: a task ran twice", st.TasksLaunched)
	}
	for _, tk := range s2.Tasks(id) {
		if tk.State != "TASK_STATE_SUCCEEDED" || tk.Run != 1 {
			t.Errorf("task after restart: %+v", tk)
		}
	}
}

// Offers rescinded while jobs are being placed and launched lose no task:
// a launch against a rescinded offer comes back LOST (or waits for a new
// offer) and the task runs again; every job succeeds with every task.
func TestRescindedOffersLoseNothing(t *testing.T) {
	m := startMaster(t, 4, 4)
	s := startDev(t, t.TempDir(), m)
	var ids []string
	stop := make(chan struct{})
	rescinded := make(chan int, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				rescinded <- n
				return
			case <-time.After(15 * time.Millisecond):
				for _, a := range []string{"S0", "S1", "S2", "S3"} {
					n += m.RescindOffers(a)
				}
			}
		}
	}()
	for i := 0; i < 5; i++ {
		ids = append(ids, s.CreateJob(jobSpec(fmt.Sprintf("rescind-%d", i), 8, 1, "200ms")))
	}
	time.Sleep(2 * time.Second)
	close(stop)
	n := <-rescinded
	for _, id := range ids {
		s.waitJob(id, "JOB_STATE_SUCCEEDED", 2*time.Minute)
		for _, tk := range s.Tasks(id) {
			if tk.State != "TASK_STATE_SUCCEEDED" {
				t.Fatalf("job %s task %+v", id, tk)
			}
		}
	}
	if n == 0 {
		t.Fatal("no offer was rescinded: the test did not exercise anything")
	}
	t.Logf("%d offers rescinded during placement; all 40 tasks succeeded", n)
}
