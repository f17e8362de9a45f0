package goalstate

import (
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	const maxDuration = time.Duration(1<<63 - 1)
	std := Backoff{Base: time.Second, Max: time.Minute}
	cases := []struct {
		name     string
		b        Backoff
		failures uint32
		want     time.Duration
	}{
		{"no failure yet waits the base", std, 0, time.Second},
		{"first failure waits the base", std, 1, time.Second},
		{"second doubles", std, 2, 2 * time.Second},
		{"third doubles again", std, 3, 4 * time.Second},
		{"sixth is 32 s", std, 6, 32 * time.Second},
		{"seventh reaches the cap", std, 7, time.Minute},
		{"far past the cap stays there", std, 40, time.Minute},
		{"shift past 63 bits stays at the cap", std, 1 << 31, time.Minute},
		{"largest count", std, ^uint32(0), time.Minute},
		{"cap exactly reached", Backoff{Base: time.Second, Max: 8 * time.Second}, 4, 8 * time.Second},
		{"base above the cap is the cap", Backoff{Base: time.Hour, Max: time.Minute}, 1, time.Minute},
		{"no base, no wait", Backoff{Max: time.Minute}, 5, 0},
		{"negative base, no wait", Backoff{Base: -time.Second, Max: time.Minute}, 5, 0},
		{"no cap grows on", Backoff{Base: time.Second}, 11, 1024 * time.Second},
		{"no cap saturates", Backoff{Base: time.Second}, 200, maxDuration},
		{"odd base doubles exactly", Backoff{Base: 3 * time.Millisecond, Max: time.Second}, 5, 48 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.Delay(c.failures); got != c.want {
				t.Errorf("Delay(%d) of %+v = %s, want %s", c.failures, c.b, got, c.want)
			}
		})
	}
}

// The delay never shrinks as failures grow and never passes the cap.
func TestBackoffMonotoneAndCapped(t *testing.T) {
	for _, b := range []Backoff{
		{Base: time.Second, Max: time.Minute},
		{Base: 7 * time.Millisecond, Max: 10 * time.Second},
		{Base: time.Nanosecond, Max: time.Duration(1<<63 - 1)},
		{Base: time.Second},
	} {
		prev := time.Duration(0)
		for f := uint32(0); f < 300; f++ {
			d := b.Delay(f)
			if d < prev {
				t.Fatalf("%+v: Delay(%d) = %s < Delay(%d) = %s", b, f, d, f-1, prev)
			}
			if b.Max > 0 && d > b.Max {
				t.Fatalf("%+v: Delay(%d) = %s past the cap", b, f, d)
			}
			if d <= 0 {
				t.Fatalf("%+v: Delay(%d) = %s", b, f, d)
			}
			prev = d
		}
	}
}
