package cassandra

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/store"
)

func TestParseReplication(t *testing.T) {
	cases := []struct {
		in      string
		want    Replication
		cql     string
		invalid bool
	}{
		{in: "1", want: Replication{Factor: 1}, cql: "{'class': 'SimpleStrategy', 'replication_factor': 1}"},
		{in: " 3 ", want: Replication{Factor: 3}, cql: "{'class': 'SimpleStrategy', 'replication_factor': 3}"},
		{in: "us-east=3,eu_west=2", want: Replication{DataCenters: map[string]int{"us-east": 3, "eu_west": 2}},
			cql: "{'class': 'NetworkTopologyStrategy', 'eu_west': 2, 'us-east': 3}"},
		{in: "dc1 = 1", want: Replication{DataCenters: map[string]int{"dc1": 1}},
			cql: "{'class': 'NetworkTopologyStrategy', 'dc1': 1}"},
		{in: "", invalid: true},
		{in: "-1", invalid: true},
		{in: "33", invalid: true},
		{in: "dc1", invalid: true},
		{in: "dc1=0", invalid: true},
		{in: "dc1=x", invalid: true},
		{in: "dc1=1,dc1=2", invalid: true},
		{in: "d'c=1", invalid: true},
		{in: "=1", invalid: true},
	}
	for _, c := range cases {
		got, err := ParseReplication(c.in)
		if c.invalid {
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ParseReplication(%q) = %+v, %v; want ErrInvalid", c.in, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseReplication(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if got.CQL() != c.cql {
			t.Errorf("%q as CQL: %s, want %s", c.in, got.CQL(), c.cql)
		}
		if again, err := ParseReplication(got.String()); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%q does not round-trip through String: %q gives %+v, %v", c.in, got.String(), again, err)
		}
	}
}

func TestConfigRejectsBadFields(t *testing.T) {
	cases := map[string]Config{
		"hosts":       {},
		"empty host":  {Hosts: []string{"a", " "}},
		"keyspace":    {Hosts: []string{"a"}, Keyspace: "drop table; x"},
		"consistency": {Hosts: []string{"a"}, Consistency: "MOST"},
		"timeout":     {Hosts: []string{"a"}, Timeout: -1},
		"replication": {Hosts: []string{"a"}, Replication: Replication{Factor: 2, DataCenters: map[string]int{"a": 1}}},
	}
	for field, cfg := range cases {
		if _, err := Open(context.Background(), cfg); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), strings.Fields(field)[len(strings.Fields(field))-1]) {
			t.Errorf("Open with bad %s: %v; want ErrInvalid naming it", field, err)
		}
	}
}

func TestOpenWithoutCassandraIsUnavailable(t *testing.T) {
	_, err := Open(context.Background(), Config{Hosts: []string{"127.0.0.1:1"}, ConnectTimeout: 500 * time.Millisecond})
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Open with nothing listening: %v; want ErrUnavailable naming the host", err)
	}
}

func TestMigrateIsIdempotentAndOpenChecksTheVersion(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, uniqueKeyspace("peloton_migrate"))
	dropKeyspace(t, cfg)

	if _, err := Open(ctx, cfg); !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), "peloton store migrate") {
		t.Fatalf("Open of a missing keyspace: %v; want ErrSchemaVersion telling to migrate", err)
	}
	first, err := Migrate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantAll := make([]int, 0, len(migrations))
	for _, m := range migrations {
		wantAll = append(wantAll, m.version)
	}
	if !first.CreatedKeyspace || !slices.Equal(first.Applied, wantAll) || first.Version != SchemaVersion() {
		t.Fatalf("first Migrate: %+v, want keyspace created and %v applied", first, wantAll)
	}
	second, err := Migrate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if second.CreatedKeyspace || len(second.Applied) != 0 || second.Version != SchemaVersion() {
		t.Fatalf("second Migrate: %+v, want nothing to do", second)
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open after Migrate: %v", err)
	}
	defer s.Close()

	// A migration recorded by a newer build makes this build refuse.
	future := SchemaVersion() + 1
	err = s.query(ctx, fmt.Sprintf("INSERT INTO %s.schema_migrations (version, description) VALUES (?, 'future')", cfg.Keyspace), future).Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, cfg); !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), fmt.Sprint(future)) {
		t.Fatalf("Open of a keyspace with migration %d: %v; want ErrSchemaVersion naming it", future, err)
	}
	// Migrating does not help: Migrate, and Open with Migrate set (a
	// server's store.cassandra.migrate), refuse it too, applying nothing.
	if res, err := Migrate(ctx, cfg); !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), fmt.Sprint(future)) || len(res.Applied) != 0 {
		t.Fatalf("Migrate of a keyspace with migration %d: %+v, %v; want ErrSchemaVersion naming it", future, res, err)
	}
	withMigrate := cfg
	withMigrate.Migrate = true
	if _, err := Open(ctx, withMigrate); !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), "upgrade peloton") {
		t.Fatalf("Open with Migrate of a keyspace with migration %d: %v; want ErrSchemaVersion", future, err)
	}
	// A missing migration (here: forgotten) is applied again by Migrate.
	err = s.query(ctx, fmt.Sprintf("DELETE FROM %s.schema_migrations WHERE version IN ?", cfg.Keyspace), []int{1, future}).Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, cfg); !errors.Is(err, ErrSchemaVersion) {
		t.Fatalf("Open with migration 1 unrecorded: %v; want ErrSchemaVersion", err)
	}
	again, err := Migrate(ctx, cfg)
	if err != nil || !slices.Equal(again.Applied, []int{1}) {
		t.Fatalf("Migrate re-applying 1: %+v, %v", again, err)
	}
}
