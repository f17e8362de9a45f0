package lossy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/federation/gossip"
	"github.com/peloton-federated/peloton/federation/policy"
	"github.com/peloton-federated/peloton/internal/faultnet"
)

// candidates are the detection settings measured against each other.
var candidates = []settings{
	{Name: "local preset (probe 1s/200ms, suspicion ×3, 1 indirect), fail after 1s", Profile: gossip.ProfileLocal,
		Health: policy.HealthConfig{SuspectAfter: 500 * time.Millisecond, FailAfter: time.Second, RecoverAfter: time.Second}},
	{Name: "lan (probe 1s/500ms, 3 indirect), suspicion ×3, fail after 2s", Profile: gossip.ProfileLAN, SuspicionMult: 3, IndirectChecks: 3,
		Health: policy.HealthConfig{SuspectAfter: time.Second, FailAfter: 2 * time.Second, RecoverAfter: time.Second}},
	{Name: "lan, suspicion ×4 (the lan preset), fail after 3s", Profile: gossip.ProfileLAN, SuspicionMult: 4, IndirectChecks: 3,
		Health: policy.HealthConfig{SuspectAfter: 2 * time.Second, FailAfter: 3 * time.Second, RecoverAfter: time.Second}},
}

// BenchmarkDetectionTradeoff measures, for each candidate setting, over
// three gossip directories (no shards) on 5% loss and 100 ms ± 50 ms:
// how often a live region is declared failed during
// PELOTON_LOSSY_DURATION (default 5m), and the time to declare a region
// cut off failed over five trials. It runs once whatever b.N
// (`make reliability`: -bench BenchmarkDetectionTradeoff -benchtime 1x).
// With PELOTON_LOSSY_CHART set to a folder it writes the figures there as
// detection-tradeoff.csv and the chart of detection time against false
// failures per day as detection-tradeoff.svg (tradeoff_test.go).
func BenchmarkDetectionTradeoff(b *testing.B) {
	run := duration(b, 5*time.Minute)
	var wg sync.WaitGroup
	results := make([]tradeoff, len(candidates))
	for i, s := range candidates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = measure(b, i, s, run)
		}()
	}
	wg.Wait()
	for _, r := range results {
		b.Log(r)
	}
	if dir := os.Getenv("PELOTON_LOSSY_CHART"); dir != "" {
		if err := writeTradeoff(dir, results); err != nil {
			b.Fatal(err)
		}
		b.Logf("wrote %s", filepath.Join(dir, "detection-tradeoff.{csv,svg}"))
	}
}

func measure(t testing.TB, slot int, s settings, run time.Duration) tradeoff {
	n := faultnet.New(uint64(100 + slot))
	n.SetDefault(wan)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var failures []string
	dirs := map[string]*federation.GossipDirectory{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	names := []string{"a", "b", "c"}
	for i, name := range names {
		var join []string
		if i > 0 {
			join = []string{dirs["a"].GossipAddr()}
		}
		ip := fmt.Sprintf("127.0.%d.%d", 10+slot, i+1)
		cfg := gossip.Config{NodeName: name + "-0", Region: name, Role: "shard", APIAddr: ip + ":1",
			BindAddr: ip + ":0", Join: join, Profile: s.Profile, Logger: slog.New(slog.DiscardHandler)}
		s.tune(&cfg)
		cfg.Transport = func(inner memberlist.NodeAwareTransport, addr string) memberlist.NodeAwareTransport {
			return n.Transport(name, addr, inner)
		}
		d, err := federation.NewGossipDirectory(ctx, cfg, s.Health, func(bool) {}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Error(err) // not Fatal: this runs beside the other settings
			return tradeoff{Setting: s.Name, Err: err.Error()}
		}
		d.OnTransition(func(tr policy.Transition) {
			if tr.To == policy.HealthFailed {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s saw %s at %s", name, tr.Region, tr.At.Format(time.TimeOnly)))
				mu.Unlock()
			}
		})
		dirs[name] = d
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx, 100*time.Millisecond) }()
	}
	health := func(viewer, region string) string {
		for _, r := range dirs[viewer].Regions() {
			if r.Name == region {
				return r.Health
			}
		}
		return ""
	}
	allAlive := func() bool {
		for _, v := range names {
			for _, r := range names {
				if v != r && health(v, r) != "alive" {
					return false
				}
			}
		}
		return true
	}
	wait := func(d time.Duration, cond func() bool) bool {
		deadline := time.Now().Add(d)
		for !cond() {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}
	if !wait(time.Minute, allAlive) {
		t.Errorf("%s: never all alive", s.Name)
		return tradeoff{Setting: s.Name, Err: "never all alive"}
	}
	// False failures under loss alone.
	time.Sleep(run)
	mu.Lock()
	falseFailures := len(failures)
	mu.Unlock()
	lost, failed := 0, 0
	for _, d := range dirs {
		for _, r := range d.Regions() {
			for _, m := range r.Members {
				lost += m.Probes.Lost
				failed += m.Probes.Failed
			}
		}
	}
	// Detection: cut c off, time until a and b see it failed; heal.
	var times []time.Duration
	for trial := 0; trial < 5; trial++ {
		if !wait(time.Minute, allAlive) {
			break
		}
		time.Sleep(2 * time.Second)
		start := time.Now()
		n.Isolate("c", true)
		if wait(time.Minute, func() bool { return health("a", "c") == "failed" && health("b", "c") == "failed" }) {
			times = append(times, time.Since(start))
		}
		n.Isolate("c", false)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return tradeoff{Setting: s.Name, Run: run, FalseFailures: falseFailures, ProbesLost: lost, ProbesFailed: failed, Detection: times}
}
