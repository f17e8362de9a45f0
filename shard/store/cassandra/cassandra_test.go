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

	"github.com/peloton-federated/peloton/shard/store"
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
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run the Cassandra tests (.ci/run starts a node with deploy/cassandra/cassandra.sh)", hostsEnv)
		}
		t.Skipf("set %s=127.0.0.1:PORT to run against a real Cassandra (deploy/cassandra/cassandra.sh start --port PORT)", hostsEnv)
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
	storetest.Run(t, func(t *testing.T) store.Store {
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
	})
}
