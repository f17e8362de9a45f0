package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

func createPool(t testing.TB, s store.Store, path string) *model.Pool {
	t.Helper()
	p := &model.Pool{Path: path, Share: model.Shares{CPU: 1}}
	mustNil(t, kinds.Pools.Create(context.Background(), s, p), "CreatePool "+path)
	return p
}

func listPools(t testing.TB, s store.Store) []*model.Pool {
	t.Helper()
	pools, err := kinds.Pools.List(context.Background(), s)
	mustNil(t, err, "ListPools")
	return pools
}

// poolAt returns the listed pool at path; the contract has no single-pool
// read, so a list is the only way to look.
func poolAt(t testing.TB, s store.Store, path string) *model.Pool {
	t.Helper()
	for _, p := range listPools(t, s) {
		if p.Path == path {
			return p
		}
	}
	t.Fatalf("pool %q is not listed", path)
	return nil
}

func testCreatePoolAndList(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got := listPools(t, s); len(got) != 0 {
		t.Fatalf("empty store lists %d pools", len(got))
	}
	pool := FullPool("/org")
	pool.Revision = 7 // ignored: a new pool always starts at revision 1
	mustNil(t, kinds.Pools.Create(ctx, s, pool), "CreatePool")
	if pool.Revision != 1 {
		t.Fatalf("caller's Revision after create = %d, want 1", pool.Revision)
	}
	listed := listPools(t, s)
	if len(listed) != 1 {
		t.Fatalf("ListPools after one create returned %d pools", len(listed))
	}
	requireUTC(t, "pool", listed[0])
	requireEqual(t, "stored pool", listed[0], pool)

	dup := FullPool("/org")
	dup.Share.CPU = 99
	dup.Revision = 41
	requireIs(t, kinds.Pools.Create(ctx, s, dup), store.ErrExists, "/org")
	if dup.Revision != 41 {
		t.Fatalf("failed create changed caller's Revision to %d", dup.Revision)
	}
	requireEqual(t, "pool after duplicate create", poolAt(t, s, "/org"), pool)

	// Neither the caller's pool nor a listed one aliases the stored one.
	want := Normal(pool)
	pool.Limit.MilliCPU = 1
	pool.CreateTime = pool.CreateTime.Add(1)
	requireEqual(t, "pool after caller mutated its copy", poolAt(t, s, "/org"), want)
	listed[0].Reservation.GPU = 77
	requireEqual(t, "pool after reader mutated its copy", poolAt(t, s, "/org"), want)
}

func testInvalidPoolRejected(t *testing.T, s store.Store) {
	ctx := context.Background()
	createPool(t, s, "/real")
	checks := map[string]error{
		"CreatePool(nil)":            kinds.Pools.Create(ctx, s, nil),
		"CreatePool with empty path": kinds.Pools.Create(ctx, s, FullPool("")),
		"UpdatePool(nil)":            kinds.Pools.Write(ctx, s, nil),
		"UpdatePool with empty path": kinds.Pools.Write(ctx, s, &model.Pool{Revision: 1}),
		"DeletePool with empty path": kinds.Pools.Delete(ctx, s, ""),
	}
	for call, err := range checks {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", call, err)
		}
	}
	got := listPools(t, s)
	if len(got) != 1 || got[0].Path != "/real" || got[0].Revision != 1 {
		t.Fatalf("invalid calls changed the pools: %+v", got)
	}
}

func testUpdatePoolCompareAndSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	requireIs(t, kinds.Pools.Write(ctx, s, &model.Pool{Path: "/ghost", Revision: 1}), store.ErrNotFound, "/ghost")
	requireIs(t, kinds.Pools.Write(ctx, s, &model.Pool{Path: "/ghost"}), store.ErrNotFound, "/ghost")

	mustNil(t, kinds.Pools.Create(ctx, s, FullPool("/svc")), "CreatePool")
	next := FullPool("/svc")
	next.Revision = 1
	next.Limit.GPU = model.Unlimited
	next.Reservation = model.Resources{}
	mustNil(t, kinds.Pools.Write(ctx, s, next), "UpdatePool at revision 1")
	if next.Revision != 2 {
		t.Fatalf("caller's Revision after update = %d, want 2", next.Revision)
	}
	requireEqual(t, "updated pool", poolAt(t, s, "/svc"), next)

	for _, rev := range []uint64{0, 1, 3, 1 << 63} {
		stale := FullPool("/svc")
		stale.Revision = rev
		stale.Share.CPU = 1000
		requireIs(t, kinds.Pools.Write(ctx, s, stale), store.ErrConflict, "/svc")
		if stale.Revision != rev {
			t.Fatalf("rejected update changed caller's Revision %d to %d", rev, stale.Revision)
		}
		requireEqual(t, fmt.Sprintf("pool after stale update at %d", rev), poolAt(t, s, "/svc"), next)
	}

	// The revision handed back is the one to use next.
	got := poolAt(t, s, "/svc")
	got.Share.Mem = 3
	mustNil(t, kinds.Pools.Write(ctx, s, got), "UpdatePool with the listed revision")
	if got.Revision != 3 || poolAt(t, s, "/svc").Share.Mem != 3 {
		t.Fatalf("second update: revision %d", got.Revision)
	}
}

func testDeletePool(t *testing.T, s store.Store) {
	ctx := context.Background()
	requireIs(t, kinds.Pools.Delete(ctx, s, "/ghost"), store.ErrNotFound, "/ghost")

	// Paths that share prefixes catch backends that delete by key prefix.
	paths := []string{"/a", "/a/b", "/a-b", "/ab"}
	for _, p := range paths {
		createPool(t, s, p)
	}
	old := poolAt(t, s, "/a")
	mustNil(t, kinds.Pools.Write(ctx, s, old), "UpdatePool /a")
	mustNil(t, kinds.Pools.Write(ctx, s, old), "UpdatePool /a again")
	mustNil(t, kinds.Pools.Delete(ctx, s, "/a"), "DeletePool /a")
	requireIs(t, kinds.Pools.Delete(ctx, s, "/a"), store.ErrNotFound, "/a")
	requireIs(t, kinds.Pools.Write(ctx, s, old), store.ErrNotFound, "/a")
	got := listPools(t, s)
	if len(got) != len(paths)-1 {
		t.Fatalf("after deleting /a, %d pools remain, want %d", len(got), len(paths)-1)
	}
	for _, p := range got {
		if p.Path == "/a" {
			t.Fatal("deleted pool /a is still listed")
		}
		if p.Revision != 1 {
			t.Fatalf("deleting /a changed %s to revision %d", p.Path, p.Revision)
		}
	}

	// A pool created again under the same path starts afresh at revision 1;
	// a writer holding the old revision conflicts.
	again := FullPool("/a")
	mustNil(t, kinds.Pools.Create(ctx, s, again), "CreatePool /a again")
	requireEqual(t, "recreated pool", poolAt(t, s, "/a"), again)
	requireIs(t, kinds.Pools.Write(ctx, s, old), store.ErrConflict, "/a")
}

func testListPoolsOrderedByPath(t *testing.T, s store.Store) {
	ctx := context.Background()
	paths := []string{"/b", "/a/b", "/", "/a/b/c", "/a-b", "/B", "/a"}
	want := map[string]*model.Pool{}
	for i, p := range paths {
		pool := FullPool(p)
		pool.Share.CPU = float64(i + 1)
		mustNil(t, kinds.Pools.Create(ctx, s, pool), "CreatePool "+p)
		want[p] = pool
	}
	// Byte order of paths: a pool comes before all its descendants, though
	// a sibling whose name extends it ("/a-b") may come between them.
	order := []string{"/", "/B", "/a", "/a-b", "/a/b", "/a/b/c", "/b"}
	got := listPools(t, s)
	if len(got) != len(order) {
		t.Fatalf("ListPools returned %d pools, want %d", len(got), len(order))
	}
	for i, p := range got {
		if p.Path != order[i] {
			t.Fatalf("ListPools[%d] = %q, want %q (byte order of paths)", i, p.Path, order[i])
		}
		requireEqual(t, "listed pool "+p.Path, p, want[p.Path])
		for _, later := range got[i+1:] {
			if strings.HasPrefix(p.Path, later.Path+"/") {
				t.Fatalf("%s is listed before its ancestor %s", p.Path, later.Path)
			}
		}
	}
}

// testUnlimitedLimitsRoundTrip stores extreme amounts, model.Unlimited
// above all, and extreme shares through create and update, and requires
// them back exactly.
func testUnlimitedLimitsRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	inf := model.Unlimited
	limits := []model.Resources{
		{MilliCPU: inf, MemMB: inf, DiskMB: inf, GPU: inf},
		{MilliCPU: inf, MemMB: 1024, DiskMB: inf, GPU: 0},
		{MilliCPU: math.MinInt64, MemMB: 1, DiskMB: -1, GPU: inf},
		{MilliCPU: 100, MemMB: 333, DiskMB: 2_500_000_000, GPU: 1},
	}
	shares := []model.Shares{
		model.EqualShares(math.Inf(1)),
		{CPU: math.MaxFloat64, Mem: math.SmallestNonzeroFloat64, Disk: 1e-300, GPU: 1},
		{CPU: 0.1, Mem: 1.0 / 3, Disk: 2.5e9, GPU: 0.5},
		model.EqualShares(1),
	}
	sameAmounts := func(what string, got, want model.Resources) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: stored %+v, read back %+v", what, want, got)
		}
	}
	for i, limit := range limits {
		path := fmt.Sprint("/limits/", i)
		pool := &model.Pool{Path: path, Limit: limit, Reservation: limit, Share: shares[i]}
		mustNil(t, kinds.Pools.Create(ctx, s, pool), "CreatePool "+path)
		got := poolAt(t, s, path)
		sameAmounts(path+" limit", got.Limit, limit)
		sameAmounts(path+" reservation", got.Reservation, limit)
		if got.Share != shares[i] {
			t.Fatalf("%s share: stored %+v, read back %+v", path, shares[i], got.Share)
		}

		// Finite to unlimited and back again through updates.
		next := limits[(i+1)%len(limits)]
		got.Limit = next
		mustNil(t, kinds.Pools.Write(ctx, s, got), "UpdatePool "+path)
		sameAmounts(path+" updated limit", poolAt(t, s, path).Limit, next)
		got.Limit = limit
		mustNil(t, kinds.Pools.Write(ctx, s, got), "UpdatePool "+path+" back")
		sameAmounts(path+" restored limit", poolAt(t, s, path).Limit, limit)
	}
}

// testPoolsMatchReferenceModel applies random pool operations, a fair
// share of them stale or aimed at missing pools, to the store and to a map,
// and requires the same outcome and the same listing after each.
func testPoolsMatchReferenceModel(t *testing.T, s store.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(13, 17))
	ref := map[string]*model.Pool{}
	paths := []string{"/", "/a", "/a/b", "/b"}
	const steps = 300
	for step := range steps {
		path := paths[rng.IntN(len(paths))]
		old, exists := ref[path]
		var rev uint64
		if exists {
			rev = old.Revision
		}
		if rng.IntN(5) == 0 {
			rev += uint64(rng.IntN(3)) - 1 // stale, ahead, or right after all
		}
		pool := &model.Pool{
			Path:       path,
			Limit:      model.Resources{MilliCPU: model.Unlimited, MemMB: int64(step)},
			Share:      model.Shares{CPU: float64(rng.IntN(4))},
			CreateTime: fixtureTime(int64(step), int64(step)),
			Revision:   rev,
		}
		var what string
		var want error
		var err error
		switch rng.IntN(3) {
		case 0:
			what = "CreatePool " + path
			if exists {
				want = store.ErrExists
			} else {
				stored := Normal(pool)
				stored.Revision = 1
				ref[path] = stored
			}
			err = kinds.Pools.Create(ctx, s, pool)
		case 1:
			what = "UpdatePool " + path
			switch {
			case !exists:
				want = store.ErrNotFound
			case old.Revision != rev:
				want = store.ErrConflict
			default:
				stored := Normal(pool)
				stored.Revision = rev + 1
				ref[path] = stored
			}
			err = kinds.Pools.Write(ctx, s, pool)
			if err == nil && pool.Revision != rev+1 || err != nil && pool.Revision != rev {
				t.Fatalf("step %d: %s moved caller's revision %d to %d (err %v)", step, what, rev, pool.Revision, err)
			}
		default:
			what = "DeletePool " + path
			if exists {
				delete(ref, path)
			} else {
				want = store.ErrNotFound
			}
			err = kinds.Pools.Delete(ctx, s, path)
		}
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Fatalf("step %d: %s returned %v, want %v", step, what, err, want)
		}
		wantList := make([]*model.Pool, 0, len(ref))
		for _, p := range slices.Sorted(maps.Keys(ref)) {
			wantList = append(wantList, ref[p])
		}
		requireEqual(t, fmt.Sprintf("pools after step %d (%s)", step, what), listPools(t, s), wantList)
	}
}

// testConcurrentPoolCompareAndSetOneWinner races writers holding the same
// revision of one pool: exactly one may win.
func testConcurrentPoolCompareAndSetOneWinner(t *testing.T, s store.Store) {
	ctx := context.Background()
	createPool(t, s, "/race")
	const racers = 8
	start := make(chan struct{})
	results := make(chan error, racers)
	for r := range racers {
		go func() {
			<-start
			pool := FullPool("/race")
			pool.Revision = 1
			pool.Share.CPU = float64(r)
			results <- kinds.Pools.Write(ctx, s, pool)
		}()
	}
	close(start)
	wins := 0
	for range racers {
		switch err := <-results; {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("losing racer got %v, want ErrConflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d racers won, want exactly 1", wins)
	}
	if pool := poolAt(t, s, "/race"); pool.Revision != 2 {
		t.Fatalf("revision after race %d, want 2", pool.Revision)
	}
}
