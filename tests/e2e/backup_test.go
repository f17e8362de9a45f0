package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The embedded store backed up and restored through the binary: jobs are
// created (some finished, some queued or running when the server stops),
// the stopped server's store is copied by `peloton store backup` and put
// into a fresh data directory by `peloton store restore`; a server started
// there has every acknowledged job, the finished ones as they ended, and
// runs the others to success (tasks it finds RUNNING on hosts that no
// longer know them run again, at least once). A restore over an existing
// store is refused and leaves it as it was.
func TestStoreBackupAndRestore(t *testing.T) {
	const hosts = "sim,hosts=2,cpu=4,duration=1s"
	dir := t.TempDir()
	s := startDev(t, dir, "--hosts", hosts)
	var ids []string
	for i := range 40 {
		ids = append(ids, s.CreateJob(fmt.Sprintf(`{"name":"backup-%d","instances":3,"task":{"command":"sim","resources":{"cpu":1,"memMb":8}}}`, i)))
	}
	states := func(s *server) map[string]string {
		states := map[string]string{}
		for _, j := range s.Jobs() {
			states[j.ID] = j.Status.State
		}
		return states
	}
	waitFor(t, 60*time.Second, "some jobs done, some not", func() bool {
		done := 0
		for _, st := range states(s) {
			if st == "JOB_STATE_SUCCEEDED" {
				done++
			}
		}
		return done >= 5
	})
	// Read before the stop: a job SUCCEEDED then is SUCCEEDED in the store.
	before := states(s)
	if len(before) != len(ids) {
		t.Fatalf("%d jobs listed before the backup, created %d", len(before), len(ids))
	}
	s.Stop()

	backup := filepath.Join(t.TempDir(), "region.db")
	out := s.MustCLI("store", "backup", "--db", filepath.Join(dir, "store.db"), "--out", backup)
	t.Logf("%s", strings.TrimSpace(out))
	fresh := t.TempDir()
	s.MustCLI("store", "restore", "--in", backup, "--db", filepath.Join(fresh, "store.db"))
	if r := s.CLI("store", "restore", "--in", backup, "--db", filepath.Join(dir, "store.db")); r.Code == 0 || !strings.Contains(r.Stderr, "exists") {
		t.Fatalf("a restore over an existing store: exit %d, %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "store.db.restoring")); err == nil {
		t.Fatal("a refused restore left its temporary file")
	}

	r := startDev(t, fresh, "--hosts", hosts)
	after := states(r)
	finished := 0
	for _, id := range ids {
		st, ok := after[id]
		if !ok {
			t.Fatalf("job %s (%s before the backup) is not in the restored region", id, before[id])
		}
		if before[id] == "JOB_STATE_SUCCEEDED" {
			finished++
			if st != before[id] {
				t.Errorf("job %s was %s before the backup, %s after the restore", id, before[id], st)
			}
		}
	}
	waitFor(t, 2*time.Minute, "every restored job to succeed", func() bool {
		for _, st := range states(r) {
			if st != "JOB_STATE_SUCCEEDED" {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		for _, tk := range r.Tasks(id) {
			if tk.State != "TASK_STATE_SUCCEEDED" {
				t.Errorf("job %s task %d is %s", id, tk.Instance, tk.State)
			}
		}
	}
	t.Logf("restored %d jobs (%d had succeeded before the backup); all succeeded", len(ids), finished)
}
