package main

import (
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/gateway"
)

func TestServerConfigLimits(t *testing.T) {
	cases := []struct {
		name     string
		limits   string
		wantErrs []string
		check    func(t *testing.T, l limitsConfig)
	}{
		{name: "defaults", check: func(t *testing.T, l limitsConfig) {
			if l.RequestBytes != 1<<20 || l.SpecRequestBytes != 64<<20 || l.InstancesPerJob != 100_000 ||
				l.PendingTasksPerPool != 1_000_000 || l.JobsPerRequest != 1000 || l.InFlight != gateway.DefaultInFlight() || time.Duration(l.InFlightWait) != 50*time.Millisecond {
				t.Fatalf("defaults: %+v", l)
			}
		}},
		{name: "sizes with units", limits: "limits: {requestBytes: 512KiB, specRequestBytes: 1GiB, inFlight: 8, inFlightWait: 1s}",
			check: func(t *testing.T, l limitsConfig) {
				if l.RequestBytes != 512<<10 || l.SpecRequestBytes != 1<<30 || l.InFlight != 8 || l.InFlightWait != duration(time.Second) {
					t.Fatalf("got %+v", l)
				}
			}},
		{name: "out of range", limits: "limits: {requestBytes: 100, instancesPerJob: 2000000, pendingTasksPerPool: -1, jobsPerRequest: 100001, inFlight: -2, inFlightWait: 1m}",
			wantErrs: []string{"limits.requestBytes: must be between", "limits.instancesPerJob: must be at most 1000000",
				"limits.pendingTasksPerPool: must be at least 1", "limits.jobsPerRequest: must be between 1 and 100000", "limits.inFlight: must be between", "limits.inFlightWait: must be between"}},
		{name: "spec limit below the other", limits: "limits: {requestBytes: 2MiB, specRequestBytes: 1MiB}",
			wantErrs: []string{"limits.specRequestBytes: must be between requestBytes"}},
		{name: "not a size", limits: "limits: {requestBytes: lots}", wantErrs: []string{"not a size like"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeServerConfig(t, "east", c.limits)
			cfg, err := loadServerConfig(path)
			if len(c.wantErrs) > 0 {
				if err == nil {
					t.Fatal("config accepted")
				}
				for _, w := range c.wantErrs {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%v\nlacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg.Limits)
		})
	}
}
