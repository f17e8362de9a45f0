package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// auditCases run against a backend with an audit log (store.AuditStore).
var auditCases = []struct {
	name string
	test func(t *testing.T, s store.AuditStore)
}{
	{"AuditRoundTripAndOrder", testAuditRoundTripAndOrder},
	{"AuditQuery", testAuditQuery},
	{"AuditExpires", testAuditExpires},
	{"AuditInvalid", testAuditInvalid},
}

func onAudit(test func(t *testing.T, s store.AuditStore)) func(t *testing.T, s store.Store) {
	return func(t *testing.T, s store.Store) {
		as, ok := s.(store.AuditStore)
		if !ok {
			t.Skipf("%T keeps no audit log (store.AuditStore)", s)
		}
		test(t, as)
	}
}

// auditBase is a time in the past every audit record of the suite starts
// from (records are kept for a ttl after their time).
func auditBase() time.Time { return time.Now().Add(-time.Minute).Truncate(time.Second) }

func auditRecord(at time.Time, name, resource string) model.AuditRecord {
	return model.AuditRecord{Time: at, Name: name, Method: "token", RPC: "/peloton.v1.JobService/CreateJob", Action: "create-job",
		Resource: resource, Code: "OK", Region: "east"}
}

func listAudit(t testing.TB, s store.AuditStore, q store.AuditQuery) []model.AuditRecord {
	t.Helper()
	got, err := s.ListAudit(context.Background(), q)
	mustNil(t, err, "ListAudit")
	return got
}

func resources(recs []model.AuditRecord) string {
	out := ""
	for i, r := range recs {
		if i > 0 {
			out += ","
		}
		out += r.Resource
	}
	return out
}

func testAuditRoundTripAndOrder(t *testing.T, s store.AuditStore) {
	ctx := context.Background()
	base := auditBase()
	full := model.AuditRecord{Time: base.Add(3 * time.Millisecond), Name: "alice", Method: "certificate", ForwardedBy: "west",
		RPC: "/peloton.v1.PoolService/UpdatePool", Action: "edit-pool", Resource: "pool /a/x", Code: "PermissionDenied",
		Message: "alice (pool-owner /a) may not edit-pool on pool /a", Region: "east"}
	// Appended out of order, two at the same time: listed in time order,
	// equal times in the order appended.
	mustNil(t, s.AppendAudit(ctx, []model.AuditRecord{auditRecord(base.Add(2*time.Millisecond), "bob", "r2"), full}, time.Hour), "AppendAudit")
	mustNil(t, s.AppendAudit(ctx, []model.AuditRecord{auditRecord(base, "bob", "r0"), auditRecord(base.Add(2*time.Millisecond), "bob", "r2b")}, time.Hour), "AppendAudit")
	got := listAudit(t, s, store.AuditQuery{})
	if r := resources(got); r != "r0,r2,r2b,pool /a/x" {
		t.Fatalf("audit order: %s", r)
	}
	last := got[3]
	if !last.Time.Equal(full.Time) {
		t.Fatalf("time %v, want %v", last.Time, full.Time)
	}
	last.Time = full.Time
	if last != full {
		t.Fatalf("round trip:\n got %+v\nwant %+v", last, full)
	}
}

func testAuditQuery(t *testing.T, s store.AuditStore) {
	ctx := context.Background()
	base := auditBase()
	var recs []model.AuditRecord
	for i := 0; i < 10; i++ {
		name := "alice"
		if i%2 == 1 {
			name = "bob"
		}
		recs = append(recs, auditRecord(base.Add(time.Duration(i)*time.Second), name, fmt.Sprint(i)))
	}
	mustNil(t, s.AppendAudit(ctx, recs, time.Hour), "AppendAudit")
	for _, c := range []struct {
		q    store.AuditQuery
		want string
	}{
		{store.AuditQuery{}, "0,1,2,3,4,5,6,7,8,9"},
		{store.AuditQuery{Limit: 3}, "7,8,9"},
		{store.AuditQuery{Name: "bob"}, "1,3,5,7,9"},
		{store.AuditQuery{Name: "bob", Limit: 2}, "7,9"},
		{store.AuditQuery{Since: base.Add(6 * time.Second)}, "7,8,9"},
		{store.AuditQuery{Since: base.Add(6*time.Second + time.Millisecond), Name: "alice"}, "8"},
		{store.AuditQuery{Name: "carol"}, ""},
	} {
		if got := resources(listAudit(t, s, c.q)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
}

func testAuditExpires(t *testing.T, s store.AuditStore) {
	ctx := context.Background()
	now := time.Now()
	mustNil(t, s.AppendAudit(ctx, []model.AuditRecord{auditRecord(now.Add(-time.Hour), "x", "past")}, time.Minute), "AppendAudit")
	mustNil(t, s.AppendAudit(ctx, []model.AuditRecord{auditRecord(now, "x", "short")}, time.Second), "AppendAudit")
	mustNil(t, s.AppendAudit(ctx, []model.AuditRecord{auditRecord(now, "x", "long")}, time.Hour), "AppendAudit")
	deadline := time.Now().Add(15 * time.Second)
	for resources(listAudit(t, s, store.AuditQuery{})) != "long" {
		if time.Now().After(deadline) {
			t.Fatalf("records with a ttl of 1s still listed after 15s: %s", resources(listAudit(t, s, store.AuditQuery{})))
		}
		time.Sleep(100 * time.Millisecond)
	}
	n, err := s.PruneAudit(ctx)
	mustNil(t, err, "PruneAudit")
	if n != 0 && n != 1 {
		t.Fatalf("PruneAudit removed %d, want 1 (or 0 where the backend expires them)", n)
	}
	if again, err := s.PruneAudit(ctx); err != nil || again != 0 {
		t.Fatalf("second PruneAudit removed %d, %v", again, err)
	}
	if got := resources(listAudit(t, s, store.AuditQuery{})); got != "long" {
		t.Fatalf("after prune: %s", got)
	}
}

func testAuditInvalid(t *testing.T, s store.AuditStore) {
	ctx := context.Background()
	good := auditRecord(auditBase(), "x", "r")
	noTime, noName, noRPC := good, good, good
	noTime.Time, noName.Name, noRPC.RPC = time.Time{}, "", ""
	for _, c := range []struct {
		recs []model.AuditRecord
		ttl  time.Duration
	}{
		{[]model.AuditRecord{good}, 0},
		{[]model.AuditRecord{good, noTime}, time.Hour},
		{[]model.AuditRecord{noName}, time.Hour},
		{[]model.AuditRecord{noRPC}, time.Hour},
	} {
		if err := s.AppendAudit(ctx, c.recs, c.ttl); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendAudit(%+v, %v): %v, want ErrInvalid", c.recs, c.ttl, err)
		}
	}
	if got := listAudit(t, s, store.AuditQuery{}); len(got) != 0 {
		t.Errorf("an invalid batch stored %d records", len(got))
	}
	if _, err := s.ListAudit(ctx, store.AuditQuery{Limit: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
}
