package cassandra

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// hostsEnv names the Cassandra the tests use, "host:port[,host:port]";
// .ci/run starts one and sets it.
const hostsEnv = "PELOTON_TEST_CASSANDRA"

// testHosts returns the test Cassandra's hosts. Without them the test
// skips, except in CI (CI=true), where a missing Cassandra is a failure.
func testHosts(t testing.TB) []string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(hostsEnv))
	if v == "" {
		testenv.Missing(t, "a test Cassandra ("+hostsEnv+")", "deploy/cassandra/cassandra.sh start --port PORT, then set "+hostsEnv+"=127.0.0.1:PORT")
	}
	return strings.Split(v, ",")
}

// uniqueKeyspace returns a keyspace name no other test run uses.
func uniqueKeyspace(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

func testConfig(t testing.TB, keyspace string) Config {
	return Config{Hosts: testHosts(t), Keyspace: keyspace, Timeout: 30 * time.Second}
}

// openFresh opens a store on a new keyspace of its own, migrated, that is
// dropped when the test ends (the store is closed before).
func openFresh(t *testing.T, prefix string) (*Store, Config) {
	t.Helper()
	cfg := testConfig(t, uniqueKeyspace(prefix))
	cfg.Migrate = true
	dropKeyspace(t, cfg)
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, cfg
}

// dropKeyspace removes a test keyspace when the test ends.
func dropKeyspace(t testing.TB, cfg Config) {
	t.Cleanup(func() {
		s, err := connect(context.Background(), mustDefaults(t, cfg))
		if err != nil {
			t.Logf("drop keyspace %s: %v", cfg.Keyspace, err)
			return
		}
		defer s.Close()
		if err := s.ddl(context.Background(), "DROP KEYSPACE IF EXISTS "+cfg.Keyspace); err != nil {
			t.Logf("drop keyspace %s: %v", cfg.Keyspace, err)
		}
	})
}

func mustDefaults(t testing.TB, cfg Config) Config {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestContract runs the shared contract suite. Every subtest gets the
// same migrated keyspace, emptied first: creating a keyspace per subtest
// would spend most of the run on schema changes.
func TestContract(t *testing.T) {
	cfg := testConfig(t, uniqueKeyspace("peloton_contract"))
	cfg.Migrate = true
	dropKeyspace(t, cfg)
	var once sync.Once
	open := func(t *testing.T) store.Store {
		var s *Store
		var err error
		once.Do(func() {
			s, err = Open(context.Background(), cfg)
			if err == nil {
				s.Close()
			}
		})
		if err != nil {
			t.Fatalf("Open with Migrate: %v", err)
		}
		open := cfg
		open.Migrate = false
		s, err = Open(context.Background(), open)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		// Every table the schema made but its own record is emptied: a
		// table a new migration adds cannot be forgotten here.
		iter := s.query(context.Background(), "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", cfg.Keyspace).Iter()
		var tables []string
		for table := ""; iter.Scan(&table); {
			if table != "schema_migrations" {
				tables = append(tables, table)
			}
		}
		if err := iter.Close(); err != nil || len(tables) == 0 {
			t.Fatalf("list the keyspace's tables: %v %v", tables, err)
		}
		for _, table := range tables {
			if err := s.query(context.Background(), fmt.Sprintf("TRUNCATE %s.%s", cfg.Keyspace, table)).Exec(); err != nil {
				t.Fatalf("truncate %s: %v", table, err)
			}
		}
		return s
	}
	storetest.Run(t, open)
	storetest.RunCopy(t, open, func() store.Whole { return memstore.New() })
}

// The audit log across days: ListAudit reads back over day partitions to
// Since, and PruneAudit forgets a past day once its records expired.
func TestAuditAcrossDays(t *testing.T) {
	s, _ := openFresh(t, "peloton_audit")
	ctx := context.Background()
	now := time.Now()
	rec := func(at time.Time, res string) model.AuditRecord {
		return model.AuditRecord{Time: at, Name: "alice", RPC: "/peloton.v1.JobService/StopJob", Resource: res, Code: "OK"}
	}
	week := 7 * 24 * time.Hour
	if err := s.AppendAudit(ctx, []model.AuditRecord{rec(now, "today"), rec(now.Add(-72*time.Hour), "3d"), rec(now.Add(-48*time.Hour), "2d")}, week); err != nil {
		t.Fatal(err)
	}
	// Kept for 5 days and 3 seconds: expires in 3 seconds.
	if err := s.AppendAudit(ctx, []model.AuditRecord{rec(now.Add(-5*24*time.Hour), "5d")}, 5*24*time.Hour+3*time.Second); err != nil {
		t.Fatal(err)
	}
	names := func(q store.AuditQuery) string {
		recs, err := s.ListAudit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.Resource)
		}
		return strings.Join(out, ",")
	}
	if got := names(store.AuditQuery{}); got != "5d,3d,2d,today" {
		t.Fatalf("all: %s", got)
	}
	if got := names(store.AuditQuery{Since: now.Add(-49 * time.Hour)}); got != "2d,today" {
		t.Fatalf("since 49h ago: %s", got)
	}
	if got := names(store.AuditQuery{Limit: 3}); got != "3d,2d,today" {
		t.Fatalf("limit 3: %s", got)
	}
	days, _ := s.auditDays(ctx)
	if len(days) != 4 {
		t.Fatalf("days %v, want 4", days)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := s.PruneAudit(ctx); err != nil {
			t.Fatal(err)
		}
		if days, _ = s.auditDays(ctx); len(days) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PruneAudit kept the expired day: days %v", days)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got := names(store.AuditQuery{}); got != "3d,2d,today" {
		t.Fatalf("after prune: %s", got)
	}
}
