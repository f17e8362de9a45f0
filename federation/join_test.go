package federation

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// soloDir is a directory that sees only its own region, still joining
// its peers or not.
type soloDir struct{ joining bool }

func (d *soloDir) Local() string     { return "solo" }
func (d *soloDir) Regions() []Region { return []Region{{Name: "solo", Health: "alive"}} }
func (d *soloDir) Joining() bool     { return d.joining }

// A region restarted while its peers do not answer yet does not take
// itself for the only region at once: the others may have relocated its
// work meanwhile. It stays fenced for joinWait ticks, then starts alone;
// a region given no peers starts at its first tick.
func TestAloneWhileJoiningStaysFenced(t *testing.T) {
	ctx := context.Background()
	for _, joining := range []bool{true, false} {
		dir := &soloDir{joining: joining}
		var fenced []bool
		f := NewFailover(NewRouter(newRelocShard("solo", map[string]uint32{}), dir, nil), func(v bool) { fenced = append(fenced, v) }, slog.New(slog.DiscardHandler), time.Hour)
		ticks := 0
		for f.fenced && ticks < 2*joinWait {
			f.Tick(ctx)
			ticks++
		}
		want := 1
		if joining {
			want = joinWait + 1
		}
		if f.fenced || ticks != want {
			t.Fatalf("joining %v: unfenced after %d ticks (still fenced: %v), want %d", joining, ticks, f.fenced, want)
		}
		if len(fenced) != 2 || !fenced[0] || fenced[1] {
			t.Fatalf("joining %v: fence calls %v, want fenced then unfenced once", joining, fenced)
		}
	}
}
