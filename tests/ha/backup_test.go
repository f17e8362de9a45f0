package ha

import (
	"crypto/rand"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A region on Cassandra backed up while it serves the load of
// TestCassandraOutage (`peloton store backup --cassandra`, a logical
// export into a store file), and the backup restored into a new keyspace
// (`peloton store restore --cassandra`). A second server started on the
// restored keyspace comes up with every job acknowledged before the
// backup began: those that had succeeded then have succeeded in it, and
// the others succeed there with every task (run again where the region
// cannot find them running). A second restore into the now filled
// keyspace is refused, naming it, and the same backup restores as an
// embedded store too: one backup format for both stores. CI backs up once
// 10 jobs have succeeded; PELOTON_BACKUP_SUCCEEDED sets how many.
func TestCassandraBackupAndRestore(t *testing.T) {
	cass := cassandraAddr(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	keyspace, restored := fmt.Sprintf("peloton_backup_%x", b), fmt.Sprintf("peloton_restored_%x", b)
	dropKeyspaceAfter(t, cass, keyspace)
	dropKeyspaceAfter(t, cass, restored)
	const storeTimeout = 5 * time.Second
	r := startLoad(t, startSolo(t, "origin", []string{cass}, keyspace, "1", storeTimeout), storeTimeout)
	load := r.load
	// How many jobs have succeeded when the backup begins: 10 in CI,
	// PELOTON_BACKUP_SUCCEEDED for a longer run.
	succeeded := chaosEnv("PELOTON_BACKUP_SUCCEEDED", 10)
	waitFor(t, time.Duration(succeeded/5+60)*time.Second, "jobs acknowledged and some succeeded", func() bool {
		done := 0
		for _, st := range r.jobStates() {
			if st.State == "JOB_STATE_SUCCEEDED" {
				done++
			}
		}
		return done >= succeeded
	})

	// The backup, under load.
	before := r.jobStates()
	began := load.now()
	acked := r.ackedBefore(began)
	file := filepath.Join(t.TempDir(), "region.db")
	out := storeCLI(t, "backup", "--cassandra", cass, "--keyspace", keyspace, "--out", file)
	ended := load.now()
	during := load.window(began, ended)
	t.Logf("%s (creates during it: %d acknowledged, %d refused, %d broken)", out, during.acked, during.refused, during.broken)
	if during.acked == 0 {
		t.Errorf("no create acknowledged while the backup ran")
	}
	r.stopLoad()
	all := load.window(0, load.now())
	if all.broken > 0 {
		t.Errorf("%d creates got neither an answer nor Unavailable in time:\n%s", all.broken, strings.Join(all.brokenDetail, "\n"))
	}

	// The restore into a new keyspace, and a region on it.
	t.Logf("%s", storeCLI(t, "restore", "--in", file, "--cassandra", cass, "--keyspace", restored))
	again := exec.Command(binary, "store", "restore", "--in", file, "--cassandra", cass, "--keyspace", restored)
	if msg, err := again.CombinedOutput(); err == nil || !strings.Contains(string(msg), "--keyspace: "+restored) || !strings.Contains(string(msg), "not empty") {
		t.Errorf("a restore into the filled keyspace: %v, %s", err, msg)
	}
	t.Logf("%s", storeCLI(t, "restore", "--in", file, "--db", filepath.Join(t.TempDir(), "store.db")))

	started := time.Now()
	back := &outageRun{t: t, m: startSolo(t, "restored", []string{cass}, restored, "1", storeTimeout)}
	up := time.Since(started)
	after := back.jobStates()
	finished := 0
	for _, id := range acked {
		st, ok := after[id]
		if !ok {
			t.Fatalf("job %s, acknowledged before the backup began (%s then), is not in the restored region", id, before[id].State)
		}
		if before[id].State == "JOB_STATE_SUCCEEDED" {
			finished++
			if st.State != "JOB_STATE_SUCCEEDED" {
				t.Errorf("job %s had succeeded before the backup, is %s after the restore", id, st.State)
			}
		}
	}
	settle := time.Now()
	back.waitSucceeded(acked, time.Minute, "every job acknowledged before the backup to succeed in the restored region")
	t.Logf("origin: %d jobs acknowledged in all, %d before the backup began (%d of them succeeded then); restored region healthy after %.1fs with %d jobs, every one acknowledged before the backup among them, and all of those succeeded %.1fs later",
		all.acked, len(acked), finished, up.Seconds(), len(after), time.Since(settle).Seconds())
}

// storeCLI runs `peloton store ARGS...` and returns its output; a failure
// fails the test.
func storeCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(binary, append([]string{"store"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("peloton store %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
