package lease

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/peloton-federated/peloton/shard/store"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := time.Second
	const skew = time.Second
	// a holds the lease at term 4, renewed at t0 for 10s: it ends at
	// t0+10s for a, at t0+11s for everyone else.
	held := record{Holder: "a", Term: 4, Acquired: at(-time.Minute), Renewed: t0, Duration: 10 * s}
	released := record{Term: 4}
	taken := func(holder string, term uint64, now time.Time, secs time.Duration) record {
		return record{Holder: holder, Term: term, Acquired: now, Renewed: now, Duration: secs * s}
	}
	renewedAt := func(now time.Time, secs time.Duration) record {
		r := held
		r.Renewed, r.Duration = now, secs*s
		return r
	}
	cases := []struct {
		name     string
		cur      record
		req      request
		now      time.Time
		want     decision
		conflict bool
	}{
		// acquire
		{name: "first acquire of a new lease gets term 1", cur: record{},
			req: request{op: acquire, holder: "a", ttl: 10 * s}, now: t0,
			want: decision{write: true, next: taken("a", 1, t0, 10), term: 1}},
		{name: "holder acquiring again keeps its term and renews", cur: held,
			req: request{op: acquire, holder: "a", ttl: 10 * s}, now: at(3 * s),
			want: decision{write: true, next: renewedAt(at(3*s), 10), term: 4}},
		{name: "another holder is refused before the expiry", cur: held,
			req: request{op: acquire, holder: "b", ttl: 10 * s}, now: at(5 * s), conflict: true},
		{name: "another holder is refused within the clock skew after the expiry", cur: held,
			req: request{op: acquire, holder: "b", ttl: 10 * s}, now: at(11*s - 1), conflict: true},
		{name: "another holder takes it once the skew has passed, with the next term", cur: held,
			req: request{op: acquire, holder: "b", ttl: 10 * s}, now: at(11 * s),
			want: decision{write: true, next: taken("b", 5, at(11*s), 10), term: 5}},
		{name: "the holder retakes its own ended lease with a new term", cur: held,
			req: request{op: acquire, holder: "a", ttl: 10 * s}, now: at(10 * s),
			want: decision{write: true, next: taken("a", 5, at(10*s), 10), term: 5}},
		{name: "a released lease is taken at once with the next term", cur: released,
			req: request{op: acquire, holder: "a", ttl: 10 * s}, now: t0,
			want: decision{write: true, next: taken("a", 5, t0, 10), term: 5}},
		{name: "a holder without a renew time counts as ended", cur: record{Holder: "x", Term: 2},
			req: request{op: acquire, holder: "b", ttl: 10 * s}, now: t0,
			want: decision{write: true, next: taken("b", 3, t0, 10), term: 3}},
		{name: "ttl rounds up to whole seconds", cur: record{},
			req: request{op: acquire, holder: "a", ttl: 1500 * time.Millisecond}, now: t0,
			want: decision{write: true, next: taken("a", 1, t0, 2), term: 1}},
		{name: "now rounds up to the microsecond", cur: record{},
			req: request{op: acquire, holder: "a", ttl: 10 * s}, now: at(time.Nanosecond),
			want: decision{write: true, next: taken("a", 1, at(time.Microsecond), 10), term: 1}},

		// renew
		{name: "the holder renews at its term", cur: held,
			req: request{op: renew, holder: "a", term: 4, ttl: 20 * s}, now: at(9 * s),
			want: decision{write: true, next: renewedAt(at(9*s), 20)}},
		{name: "a renewal at the expiry is too late", cur: held,
			req: request{op: renew, holder: "a", term: 4, ttl: 10 * s}, now: at(10 * s), conflict: true},
		{name: "a renewal at another term is refused", cur: held,
			req: request{op: renew, holder: "a", term: 3, ttl: 10 * s}, now: at(s), conflict: true},
		{name: "a renewal by another holder is refused", cur: held,
			req: request{op: renew, holder: "b", term: 4, ttl: 10 * s}, now: at(s), conflict: true},
		{name: "a renewal of a released lease is refused", cur: released,
			req: request{op: renew, holder: "a", term: 4, ttl: 10 * s}, now: at(s), conflict: true},
		{name: "a renewal of a lease that does not exist is refused", cur: record{},
			req: request{op: renew, holder: "a", term: 0, ttl: 10 * s}, now: t0, conflict: true},

		// release
		{name: "the holder releases, keeping the term", cur: held,
			req: request{op: release, holder: "a", term: 4}, now: at(s),
			want: decision{write: true, next: released}},
		{name: "the holder releases an ended lease", cur: held,
			req: request{op: release, holder: "a", term: 4}, now: at(time.Minute),
			want: decision{write: true, next: released}},
		{name: "a release at another term changes nothing", cur: held,
			req: request{op: release, holder: "a", term: 5}, now: at(s)},
		{name: "a release by another holder changes nothing", cur: held,
			req: request{op: release, holder: "b", term: 4}, now: at(s)},
		{name: "a release of a free lease changes nothing", cur: released,
			req: request{op: release, holder: "a", term: 4}, now: at(s)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decide(c.cur, c.req, c.now, skew)
			if c.conflict {
				if !errors.Is(got.err, store.ErrConflict) || got.write {
					t.Fatalf("decide = %+v, want a refusal wrapping ErrConflict", got)
				}
				return
			}
			if got.err != nil || got.write != c.want.write || got.term != c.want.term || !sameRecord(got.next, c.want.next) {
				t.Fatalf("decide =\n  %+v\nwant\n  %+v", got, c.want)
			}
		})
	}
}

func TestHeldBy(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	held := record{Holder: "a", Term: 4, Renewed: t0, Duration: 10 * time.Second}
	cases := []struct {
		name       string
		cur        record
		now        time.Time
		wantHolder string
		wantTerm   uint64
	}{
		{"held", held, t0.Add(5 * time.Second), "a", 4},
		{"past the expiry, within the skew", held, t0.Add(10 * time.Second), "a", 4},
		{"past the skew", held, t0.Add(11 * time.Second), "", 0},
		{"released", record{Term: 4}, t0, "", 0},
		{"never written", record{}, t0, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			holder, term := heldBy(c.cur, c.now, time.Second)
			if holder != c.wantHolder || term != c.wantTerm {
				t.Fatalf("heldBy = %q, %d; want %q, %d", holder, term, c.wantHolder, c.wantTerm)
			}
		})
	}
}

// TestLeaseRoundTrip checks that a record survives the Lease object as
// the API server stores it (JSON; MicroTime keeps microseconds).
func TestLeaseRoundTrip(t *testing.T) {
	now := stamp(time.Date(2030, 1, 1, 0, 0, 0, 123456789, time.UTC))
	for _, r := range []record{
		{Holder: "127.0.0.1:5390", Term: 7, Acquired: now.Add(-time.Hour), Renewed: now, Duration: 10 * time.Second},
		{Term: 7},
		{},
	} {
		data, err := json.Marshal(toLease(&coordinationv1.Lease{}, r))
		if err != nil {
			t.Fatal(err)
		}
		var lease coordinationv1.Lease
		if err := json.Unmarshal(data, &lease); err != nil {
			t.Fatal(err)
		}
		if got := fromLease(&lease); !sameRecord(got, r) {
			t.Errorf("round trip of %+v gave %+v", r, got)
		}
	}
}

func sameRecord(a, b record) bool {
	return a.Holder == b.Holder && a.Term == b.Term && a.Acquired.Equal(b.Acquired) &&
		a.Renewed.Equal(b.Renewed) && a.Duration == b.Duration
}
