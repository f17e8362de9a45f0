package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// A process that held a big job gives the memory back once the job ends:
// `peloton dev` on one simulated host of one core, idle after a job of 100
// tasks, gets a job of
// PELOTON_MEMORY_TASKS one-core tasks (default 20,000; the figure
// is 1,000,000: make bench-memory), so all but one wait. Once every task is
// created and pending, the job is stopped, and the resident set read from
// /proc/<pid>/status must come back to at most 1.5 times what the idle
// process held before the job (within PELOTON_MEMORY_SETTLE seconds,
// default 60). It prints the idle, peak and final resident sets and their
// ratio.
func TestMemoryReturnsAfterABigJob(t *testing.T) {
	tasks := envInt(t, "PELOTON_MEMORY_TASKS", 20000)
	settle := time.Duration(envInt(t, "PELOTON_MEMORY_SETTLE", 60)) * time.Second
	const maxRatio = 1.5

	s := startDev(t, t.TempDir(), "--hosts", "sim,hosts=1,cpu=1,mem=1024,duration=1h",
		"--limit-instances-per-job", fmt.Sprint(max(tasks, 100000)))
	pid := s.Pid()
	// A small job first, stopped the same way: the idle size is that of a
	// process that has run the code of a job (its pages mapped in), not of
	// one that has only started.
	warm := s.CreateJob(`{"name":"warm","instances":100,"preemptible":true,"task":{"command":"sim","resources":{"cpu":1,"memMb":1}}}`)
	if code, body := s.HTTP("POST", "/v1/jobs/"+warm+"/stop", "{}"); code != 200 {
		t.Fatalf("stop: %d %s", code, body)
	}
	s.WaitJob(warm, "JOB_STATE_KILLED", time.Minute)
	// The idle size: the smallest of a few readings once settled.
	time.Sleep(2 * time.Second)
	idle := procStatusKB(t, pid, "VmRSS")
	for range 5 {
		time.Sleep(200 * time.Millisecond)
		idle = min(idle, procStatusKB(t, pid, "VmRSS"))
	}
	idleAnon, idleFile := procStatusKB(t, pid, "RssAnon"), procStatusKB(t, pid, "RssFile")

	start := time.Now()
	id := s.CreateJob(fmt.Sprintf(`{"name":"big","instances":%d,"preemptible":true,"task":{"command":"sim","resources":{"cpu":1,"memMb":1}}}`, tasks))
	status := func() testkit.Job { return s.Job(id) }
	testkit.WaitFor(t, 10*time.Minute, "every task created and pending", func() bool {
		st := status().Status.TaskStates
		return int(st["PENDING"]+st["RUNNING"]+st["LAUNCHING"]+st["PLACED"]) >= tasks
	})
	pending := time.Since(start)
	peakPending := procStatusKB(t, pid, "VmHWM")
	if code, body := s.HTTP("POST", "/v1/jobs/"+id+"/stop", "{}"); code != 200 {
		t.Fatalf("stop: %d %s", code, body)
	}
	testkit.WaitFor(t, 10*time.Minute, "the job killed", func() bool {
		return status().Status.State == "JOB_STATE_KILLED"
	})
	ended := time.Since(start)
	peak := procStatusKB(t, pid, "VmHWM")

	var after int64
	settled := testkit.WaitFor(t, settle+time.Second, "", func() bool {
		after = procStatusKB(t, pid, "VmRSS")
		return float64(after) <= maxRatio*float64(idle) || time.Since(start) > ended+settle
	})
	ratio := float64(after) / float64(idle)
	t.Logf("%d tasks pending after %.1fs, job killed after %.1fs; resident: idle %.1f MiB (anon %.1f, file %.1f), peak %.1f MiB until every task was pending (%.0f B per task over idle), %.1f MiB until the job was killed, after the job %.1f MiB (anon %.1f, file %.1f) %.1fs after it ended; after/idle %.2f (at most %.1f)",
		tasks, pending.Seconds(), ended.Seconds(), mib(idle), mib(idleAnon), mib(idleFile), mib(peakPending), float64(peakPending-idle)*1024/float64(tasks), mib(peak),
		mib(after), mib(procStatusKB(t, pid, "RssAnon")), mib(procStatusKB(t, pid, "RssFile")), settled.Seconds(), ratio, maxRatio)
	if ratio > maxRatio {
		t.Fatalf("the process kept %.1f MiB after the job, %.2f times its idle %.1f MiB", mib(after), ratio, mib(idle))
	}
}

// procStatusKB reads a "Name: N kB" line of /proc/<pid>/status.
func procStatusKB(t *testing.T, pid int, name string) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, name)
	return 0
}

func mib(kb int64) float64 { return float64(kb) / 1024 }
