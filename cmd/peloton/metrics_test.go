package main

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"github.com/prometheus/client_golang/prometheus"
)

// The errors the router's background loops report are exported as a
// counter per loop.
func TestBackgroundErrorsExported(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := dead.Addr().String()
	dead.Close()
	dir := federation.NewStaticDirectory("east", []federation.Region{{Name: "east"}, {Name: "west", Addr: addr}})
	router := federation.NewRouter(nil, dir, nil)
	defer router.Close()
	f := federation.NewFailover(router, func(bool) {}, slog.New(slog.DiscardHandler), time.Hour)
	for range 2 {
		f.Tick(context.Background()) // west cannot be reached: the failback check fails
	}
	reg := prometheus.NewRegistry()
	st := memstore.New()
	reg.MustRegister(regionCollector{&regionRuntime{name: "east", router: router,
		replicas: federation.NewValueReplicas(st, clock.Real{}), drills: federation.NewValueDrills(st)}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range families {
		if mf.GetName() != "peloton_federation_background_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["region"] == "east" && labels["loop"] == "failover" {
				found = true
				if got := m.GetCounter().GetValue(); got != 2 {
					t.Errorf("failover errors = %v, want 2", got)
				}
			}
		}
	}
	if !found {
		t.Fatalf("peloton_federation_background_errors_total{region=east,loop=failover} not exported; families: %d", len(families))
	}
}
