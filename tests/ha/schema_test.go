package ha

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// A store written by a newer build is refused at start: `peloton server`
// exits non-zero at once, saying which version the store is at, which
// this build reads, and what to do, and leaves the store as it was.
// Embedded: a file whose format is one past this build's. Cassandra: a
// keyspace with a migration this build does not know recorded in its
// schema_migrations (the server's store.cassandra.migrate does not help:
// it never undoes a newer build's migration).
func TestServerRefusesNewerStore(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "store.db")
		st, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		setFormat := func(v byte) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte{v}) })
			if err := errors.Join(err, db.Close()); err != nil {
				t.Fatal(err)
			}
		}
		setFormat(3)
		out := refusedStart(t, fmt.Sprintf("dataDir: %s\nstore: {kind: embedded}\n", dir))
		for _, want := range []string{"written by a newer build", "the file is in format 3, this build reads format 2", "run the newer peloton"} {
			if !strings.Contains(out, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, out)
			}
		}
		// Left as it was: with its format set back, this build opens it.
		setFormat(2)
		st, err = boltstore.Open(path)
		if err != nil {
			t.Fatalf("the refused store no longer opens: %v", err)
		}
		st.Close()
	})

	t.Run("cassandra", func(t *testing.T) {
		cass := cassandraAddr(t)
		var b [4]byte
		_, _ = rand.Read(b[:])
		keyspace := fmt.Sprintf("peloton_newer_%x", b)
		dropKeyspaceAfter(t, cass, keyspace)
		storeCLI(t, "migrate", "--cassandra", cass, "--keyspace", keyspace)
		future := cassandra.SchemaVersion() + 1
		cluster := gocql.NewCluster(cass)
		cluster.Timeout = 30 * time.Second
		session, err := cluster.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		// Cleanups run last first: the newer migration is forgotten, so that
		// this build may drop the keyspace.
		t.Cleanup(func() {
			defer session.Close()
			if err := session.Query(fmt.Sprintf("DELETE FROM %s.schema_migrations WHERE version = ?", keyspace), future).Exec(); err != nil {
				t.Logf("forget migration %d: %v", future, err)
			}
		})
		err = session.Query(fmt.Sprintf("INSERT INTO %s.schema_migrations (version, description, applied_at) VALUES (?, 'from a newer build', toTimestamp(now()))", keyspace), future).Exec()
		if err != nil {
			t.Fatal(err)
		}
		out := refusedStart(t, fmt.Sprintf("dataDir: %s\nstore: {kind: cassandra, cassandra: {hosts: [%q], keyspace: %s, migrate: true}}\n", t.TempDir(), cass, keyspace))
		want := fmt.Sprintf("keyspace %s has migrations %d that this build (schema %d) does not know; upgrade peloton", keyspace, future, cassandra.SchemaVersion())
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	})
}

// refusedStart runs `peloton server` with the config store (region,
// address and hosts added) and requires it to exit non-zero within 60 s;
// it returns what the server printed.
func refusedStart(t *testing.T, store string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "server.yaml")
	body := fmt.Sprintf("region: r\naddr: %s\nhosts: [\"sim,hosts=2\"]\n%s", testkit.FreeAddr(t), store)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testkit.StartServerProcess(t, binary, cfg, testkit.Options{Name: "the server on a newer store"})
	waitFor(t, 60*time.Second, "the server to exit on a newer store", srv.Exited)
	_, err := srv.Exit()
	out := srv.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("the server on a newer store: %v, want a non-zero exit\n%s", err, out)
	}
	t.Logf("exit %d: %s", exit.ExitCode(), lastLines(out, 3))
	return out
}
