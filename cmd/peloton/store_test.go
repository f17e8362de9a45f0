package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/testenv"
)

func TestStoreMigrateRejectsBadFlags(t *testing.T) {
	cases := map[string]migrateOptions{
		"--cassandra":   {replication: "1", timeout: time.Second},
		"--replication": {hosts: "127.0.0.1", replication: "dc1=0", timeout: time.Second},
		"--timeout":     {hosts: "127.0.0.1", replication: "1"},
	}
	for flag, o := range cases {
		err := runStoreMigrate(context.Background(), &bytes.Buffer{}, o)
		if err == nil || !strings.HasPrefix(err.Error(), flag) {
			t.Errorf("bad %s: %v, want an error naming the flag", flag, err)
		}
	}
}

// TestStoreMigrate runs the command twice against the test Cassandra
// (PELOTON_TEST_CASSANDRA): the first run creates and migrates, the second
// has nothing to do.
func TestStoreMigrate(t *testing.T) {
	hosts := os.Getenv("PELOTON_TEST_CASSANDRA")
	if hosts == "" {
		testenv.Missing(t, "a test Cassandra (PELOTON_TEST_CASSANDRA)", "deploy/cassandra/cassandra.sh start, then set PELOTON_TEST_CASSANDRA=127.0.0.1:PORT")
	}
	keyspace := fmt.Sprintf("peloton_cli_%d", time.Now().UnixNano()%1e9)
	o := migrateOptions{hosts: hosts, keyspace: keyspace, replication: "1", timeout: time.Minute}
	var out bytes.Buffer
	if err := runStoreMigrate(context.Background(), &out, o); err != nil {
		t.Fatal(err)
	}
	first := out.String()
	if !strings.Contains(first, "created keyspace "+keyspace) || !strings.Contains(first, "applied migrations 1") {
		t.Fatalf("first migrate printed %q", first)
	}
	out.Reset()
	if err := runStoreMigrate(context.Background(), &out, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "nothing to apply") {
		t.Fatalf("second migrate printed %q", out.String())
	}
	t.Logf("first run:\n%ssecond run:\n%s", first, out.String())
}
