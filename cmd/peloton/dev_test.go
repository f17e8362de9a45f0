package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// devFlags parses args as dev's flags.
func devFlags(t *testing.T, args ...string) *devOptions {
	t.Helper()
	o := &devOptions{}
	f := pflag.NewFlagSet("dev", pflag.ContinueOnError)
	o.register(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// dev's flags are checked before anything starts: a bad one is refused
// naming it; good ones say which regions listen where.
func TestDevPlan(t *testing.T) {
	cases := []struct {
		args []string
		// want: the regions as name@addr, or the error's start.
		want, wantErr string
	}{
		{want: "local@127.0.0.1:5390"},
		{args: []string{"--regions", "3"}, want: "east@127.0.0.1:5390 west@127.0.0.1:5391 central@127.0.0.1:5392"},
		{args: []string{"--regions", "a, b", "--addr", "127.0.0.2:7000"}, want: "a@127.0.0.2:7000 b@127.0.0.2:7001"},
		{args: []string{"--addr", "0.0.0.0:5390", "--insecure"}, want: "local@0.0.0.0:5390"},
		{args: []string{"--regions", "10"}, wantErr: "--regions: 10 is not between 1 and 9"},
		{args: []string{"--regions", "a,a"}, wantErr: `--regions: "a,a": names must be non-empty and unique`},
		{args: []string{"--region", ""}, wantErr: "--region: must not be empty"},
		{args: []string{"--entitlement-period", "0s"}, wantErr: "--entitlement-period: must be > 0"},
		{args: []string{"--history-interval", "10ms"}, wantErr: "--history-interval: must be at least 1s"},
		{args: []string{"--history-window", "10s"}, wantErr: "--history-window: must be at least 1m"},
		{args: []string{"--host-pool-period", "1ms"}, wantErr: `--host-pool-period: "1ms": want a duration`},
		{args: []string{"--host-pool-floor", "batch"}, wantErr: "--host-pool-floor: "},
		{args: []string{"--host-pool-drain-deadline", "0s"}, wantErr: "--host-pool-drain-deadline: must be > 0"},
		{args: []string{"--limit-in-flight", "-1"}, wantErr: "--limit-in-flight: must be between 1 and"},
		{args: []string{"--limit-request-bytes", "100"}, wantErr: "--limit-request-bytes: must be between"},
		{args: []string{"--addr", "0.0.0.0:5390"}, wantErr: "refusing to serve dev mode"},
		{args: []string{"--addr", "127.0.0.1"}, wantErr: "--addr: "},
		{args: []string{"--addr", "127.0.0.1:http"}, wantErr: `--addr: port "http" is not a number`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			plan, err := devFlags(t, c.args...).plan()
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("plan: %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range plan.regions {
				got = append(got, fmt.Sprintf("%s@%s", r.Name, r.Addr))
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("regions %v, want %s", got, c.want)
			}
		})
	}
}

// Each region of a dev cluster of several keeps its store in a folder of
// its own and finds the others through gossip, joining the first.
func TestDevRegionConfig(t *testing.T) {
	o := devFlags(t, "--regions", "2", "--data-dir", "/d", "--limit-in-flight", "7")
	plan, err := o.plan()
	if err != nil {
		t.Fatal(err)
	}
	rc := o.regionConfig(plan, 1)
	if rc.Name != "west" || rc.DataDir != "/d/west" || rc.Addr != "127.0.0.1:5391" || rc.Limits.InFlight != 7 || rc.Limits.JobsPerRequest != 1000 {
		t.Fatalf("region config %+v", rc)
	}
	if g := devGossip(plan.regions[0], o.addr, nil); g.NodeName != "east-0" || g.BindAddr != "127.0.0.1:0" || len(g.Join) != 0 {
		t.Fatalf("first region's gossip %+v", g)
	}
	if one := (&devOptions{dataDir: "/d"}).regionConfig(devPlan{regions: plan.regions[:1]}, 0); one.DataDir != "/d" {
		t.Fatalf("a lone region keeps its store in %s, want /d", one.DataDir)
	}
}
