package lease

import (
	"errors"
	"testing"
	"time"
)

func TestNewTiming(t *testing.T) {
	s := time.Second
	cases := []struct {
		name                      string
		ttl, renew, retry, margin time.Duration
		want                      timing
		wantErr                   bool
	}{
		{name: "all defaults", want: timing{ttl: 10 * s, renewEvery: 10 * s / 3, retryEvery: 2 * s, margin: 2 * s}},
		{name: "defaults from the ttl", ttl: 15 * s, want: timing{ttl: 15 * s, renewEvery: 5 * s, retryEvery: 3 * s, margin: 3 * s}},
		{name: "all given", ttl: 6 * s, renew: s, retry: 500 * time.Millisecond, margin: 2 * s,
			want: timing{ttl: 6 * s, renewEvery: s, retryEvery: 500 * time.Millisecond, margin: 2 * s}},
		{name: "renewal just in time", ttl: 10 * s, renew: 7999 * time.Millisecond, margin: 2 * s,
			want: timing{ttl: 10 * s, renewEvery: 7999 * time.Millisecond, retryEvery: 2 * s, margin: 2 * s}},
		{name: "renewal at the safe deadline", ttl: 10 * s, renew: 8 * s, margin: 2 * s, wantErr: true},
		{name: "renewal slower than the ttl", ttl: 10 * s, renew: 11 * s, wantErr: true},
		{name: "margin as long as the ttl", ttl: 10 * s, margin: 10 * s, wantErr: true},
		{name: "negative ttl", ttl: -s, wantErr: true},
		{name: "negative renewal", renew: -s, wantErr: true},
		{name: "negative retry", retry: -s, wantErr: true},
		{name: "negative margin", margin: -s, wantErr: true},
		{name: "ttl too short to divide", ttl: 2, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := newTiming(c.ttl, c.renew, c.retry, c.margin)
			if c.wantErr {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("newTiming = %+v, %v; want ErrInvalidConfig", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("newTiming = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestElected(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tm := timing{ttl: 10 * time.Second, renewEvery: 3 * time.Second, retryEvery: 2 * time.Second, margin: 2 * time.Second}
	cases := []struct {
		name   string
		answer time.Duration // after the call was sent
		wantOK bool
	}{
		{"answered at once", 0, true},
		{"answered slowly", 7 * time.Second, true},
		{"answered just before the safe deadline", 8*time.Second - 1, true},
		{"answered at the safe deadline", 8 * time.Second, false},
		{"answered after the ttl", 12 * time.Second, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			safe, ok := elected(t0.Add(c.answer), t0, tm)
			if ok != c.wantOK || !safe.Equal(t0.Add(8*time.Second)) {
				t.Fatalf("elected = %v, %v; want %v, %v", safe, ok, t0.Add(8*time.Second), c.wantOK)
			}
		})
	}
}

func TestAfterRenewal(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := time.Second
	// Safe for ttl - margin = 8s after a call; renew every 3s; after a
	// failure retry after min(retry 2s, renew 3s) = 2s.
	tm := timing{ttl: 10 * s, renewEvery: 3 * s, retryEvery: 2 * s, margin: 2 * s}
	cases := []struct {
		name        string
		now, sentAt time.Duration
		safeUntil   time.Duration
		outcome     renewal
		want        leaderStep
	}{
		{name: "renewed promptly: safe 8s after the call, renew 3s after it",
			now: 3*s + 10*time.Millisecond, sentAt: 3 * s, safeUntil: 8 * s, outcome: renewed,
			want: leaderStep{safeUntil: at(11 * s), renewAt: at(6 * s)}},
		{name: "renewed slowly: renew again at once",
			now: 7 * s, sentAt: 3 * s, safeUntil: 8 * s, outcome: renewed,
			want: leaderStep{safeUntil: at(11 * s), renewAt: at(7 * s)}},
		{name: "renewed, answered after the new safe deadline",
			now: 11 * s, sentAt: 3 * s, safeUntil: 8 * s, outcome: renewed,
			want: leaderStep{safeUntil: at(11 * s), lost: lostLateAnswer}},
		{name: "renewal sent before an earlier one keeps the later deadline",
			now: 5 * s, sentAt: 2 * s, safeUntil: 12 * s, outcome: renewed,
			want: leaderStep{safeUntil: at(12 * s), renewAt: at(5 * s)}},
		{name: "refused: lost at once, even with time left",
			now: 3 * s, sentAt: 3 * s, safeUntil: 8 * s, outcome: refused,
			want: leaderStep{safeUntil: at(8 * s), lost: lostToAnother}},
		{name: "failed with time left: retry sooner than a renewal",
			now: 3 * s, sentAt: 3 * s, safeUntil: 8 * s, outcome: failed,
			want: leaderStep{safeUntil: at(8 * s), renewAt: at(5 * s)}},
		{name: "failed near the deadline: wake at the deadline",
			now: 7 * s, sentAt: 6 * s, safeUntil: 8 * s, outcome: failed,
			want: leaderStep{safeUntil: at(8 * s), renewAt: at(8 * s)}},
		{name: "failed at the deadline: lost",
			now: 8 * s, sentAt: 6 * s, safeUntil: 8 * s, outcome: failed,
			want: leaderStep{safeUntil: at(8 * s), lost: lostUnrenewed}},
		{name: "failed past the deadline: lost",
			now: 9 * s, sentAt: 6 * s, safeUntil: 8 * s, outcome: failed,
			want: leaderStep{safeUntil: at(8 * s), lost: lostUnrenewed}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := afterRenewal(at(c.now), at(c.sentAt), at(c.safeUntil), c.outcome, tm)
			if !got.safeUntil.Equal(c.want.safeUntil) || !got.renewAt.Equal(c.want.renewAt) || got.lost != c.want.lost {
				t.Fatalf("afterRenewal = safe %v, renew %v, lost %q; want safe %v, renew %v, lost %q",
					got.safeUntil.Sub(t0), got.renewAt.Sub(t0), got.lost,
					c.want.safeUntil.Sub(t0), c.want.renewAt.Sub(t0), c.want.lost)
			}
		})
	}
}

// TestLeaderNeverActsPastTheStoresTTL replays random renewal histories
// through afterRenewal and checks the safety property against a naive
// account of the store: at every moment the leader considers its lease
// safe, the store still holds it (the last successful call was sent less
// than ttl - margin before), and while it leads it always has a renewal
// planned before that deadline.
func TestLeaderNeverActsPastTheStoresTTL(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tm := timing{ttl: 10 * time.Second, renewEvery: 3 * time.Second, retryEvery: 2 * time.Second, margin: 2 * time.Second}
	for seed := range uint64(200) {
		state := seed*6364136223846793005 + 1442695040888963407
		next := func(n uint64) uint64 {
			state = state*6364136223846793005 + 1442695040888963407
			return (state >> 33) % n
		}
		lastOK := t0 // the acquire
		step := leaderStep{safeUntil: tm.safeUntil(t0), renewAt: t0.Add(tm.renewEvery)}
		for i := 0; i < 50 && step.lost == stillLeading; i++ {
			sentAt := step.renewAt
			if expired(sentAt, step.safeUntil) {
				break // the shell stops here without calling the store
			}
			now := sentAt.Add(time.Duration(next(5000)) * time.Millisecond) // up to 5s to answer
			outcome := renewal(next(3))
			if outcome == refused {
				outcome = failed // refusals end at once; exercise long histories
			}
			step = afterRenewal(now, sentAt, step.safeUntil, outcome, tm)
			if outcome == renewed {
				lastOK = sentAt
			}
			if step.safeUntil.After(lastOK.Add(tm.ttl - tm.margin)) {
				t.Fatalf("seed %d: safe until %v, but the store holds the lease only until %v",
					seed, step.safeUntil.Sub(t0), lastOK.Add(tm.ttl).Sub(t0))
			}
			if step.lost == stillLeading && (step.renewAt.After(step.safeUntil) || step.renewAt.Before(now)) {
				t.Fatalf("seed %d: renewal planned at %v, outside [%v, %v]",
					seed, step.renewAt.Sub(t0), now.Sub(t0), step.safeUntil.Sub(t0))
			}
		}
	}
}
