package main

import (
	"context"
	"sort"
	"time"

	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/metrics"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// regionFamilies are the names of the region member's families.
var regionFamilies []string

func regionDesc(name, help string, labels []string) *prometheus.Desc {
	regionFamilies = append(regionFamilies, name)
	return prometheus.NewDesc(name, help, labels, nil)
}

// Families of the region member (the shard's are in shard/metrics).
var (
	leaderDesc      = regionDesc("peloton_lease_leader_bool", "1 while this member leads the region's shard.", []string{"region"})
	termDesc        = regionDesc("peloton_lease_term", "The term of the region's lease this member last saw (0 without HA).", []string{"region"})
	healthDesc      = regionDesc("peloton_federation_region_health_bool", "1 for the health this member sees a region in (alive, suspect, failed).", []string{"region", "peer", "health"})
	membersDesc     = regionDesc("peloton_federation_gossip_members", "Gossip members this member sees, by status.", []string{"region", "status"})
	replicaAgeDesc  = regionDesc("peloton_federation_replica_age_seconds", "Time since replicas of an owner region's jobs last arrived here (replica lag).", []string{"region", "owner"})
	replicasDesc    = regionDesc("peloton_federation_replicas", "Replicas of an owner region's jobs kept here.", []string{"region", "owner"})
	shareDesc       = regionDesc("peloton_federation_pool_share_amount", "This region's share of a federation-wide pool from the global pass.", []string{"region", "pool", "bound", "resource"})
	drillsDesc      = regionDesc("peloton_federation_drills", "Drills as last saved here, by state (running: in progress).", []string{"region", "state"})
	bgErrorsDesc    = regionDesc("peloton_federation_background_errors_total", "Errors the member's background loops reported (drill, failover, progress, global), by loop.", []string{"region", "loop"})
	forwardedFamily = "peloton_federation_forwarded_calls_total"
)

// regionCollector exports the region member's figures on every scrape.
type regionCollector struct{ r *regionRuntime }

func (c regionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{leaderDesc, termDesc, healthDesc, membersDesc, replicaAgeDesc, replicasDesc, shareDesc, drillsDesc, bgErrorsDesc} {
		ch <- d
	}
}

func (c regionCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	name := r.name
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, labels...)...)
	}
	r.mu.Lock()
	leading := r.engine != nil
	shares := r.shares
	r.mu.Unlock()
	gauge(leaderDesc, boolGauge(leading))
	var term uint64
	if r.elector != nil {
		_, term = r.elector.Leader()
	}
	gauge(termDesc, float64(term))
	if r.dir != nil {
		for _, reg := range r.dir.Regions() {
			for _, h := range []string{"alive", "suspect", "failed"} {
				gauge(healthDesc, boolGauge(reg.Health == h), reg.Name, h)
			}
		}
		byStatus := map[string]int{}
		for _, m := range r.dir.Members() {
			byStatus[string(m.Status)]++
		}
		for s, n := range byStatus {
			gauge(membersDesc, float64(n), s)
		}
	}
	paths := make([]string, 0, len(shares))
	for p := range shares {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		sh := shares[p]
		shareAmounts(gauge, p, "reservation", sh.Reservation)
		shareAmounts(gauge, p, "limit", sh.Limit)
	}
	for _, le := range r.router.BackgroundErrors() {
		ch <- prometheus.MustNewConstMetric(bgErrorsDesc, prometheus.CounterValue, float64(le.Count), name, le.Loop)
	}
	for _, rc := range r.replicas.Counts() {
		if rc.Saved.IsZero() {
			continue // none arrived since the start
		}
		gauge(replicaAgeDesc, time.Since(rc.Saved).Seconds(), rc.Owner)
		gauge(replicasDesc, float64(rc.Replicas), rc.Owner)
	}
	for s, n := range r.drills.ByState() {
		gauge(drillsDesc, float64(n), s)
	}
}

func shareAmounts(gauge func(*prometheus.Desc, float64, ...string), pool, bound string, r model.Resources) {
	for _, a := range []struct {
		name string
		v    int64
		unit float64
	}{{"cpu_cores", r.MilliCPU, 1000}, {"mem_mib", r.MemMB, 1}, {"disk_mib", r.DiskMB, 1}, {"gpus", r.GPU, 1}} {
		if a.v != model.Unlimited {
			gauge(shareDesc, float64(a.v)/a.unit, pool, bound, a.name)
		}
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// registerRegionMetrics registers the shard's and the member's collectors
// and counts the calls the router forwards to other regions.
func registerRegionMetrics(reg *prometheus.Registry, r *regionRuntime) {
	reg.MustRegister(metrics.NewCollector(r.name, func() (jobmgr.Stats, bool) {
		r.mu.Lock()
		e := r.engine
		r.mu.Unlock()
		if e == nil {
			return jobmgr.Stats{}, false
		}
		return e.Stats(), true
	}), regionCollector{r})
	forwarded := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: forwardedFamily,
		Help: "Calls forwarded to another region's gateway (or this region's leader), by target address and status code.",
	}, []string{"region", "target", "code"})
	reg.MustRegister(forwarded)
	r.router.AddDialOptions(
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			err := invoker(ctx, method, req, reply, cc, opts...)
			forwarded.WithLabelValues(r.name, cc.Target(), status.Code(err).String()).Inc()
			return err
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, d *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			s, err := streamer(ctx, d, cc, method, opts...)
			forwarded.WithLabelValues(r.name, cc.Target(), status.Code(err).String()).Inc()
			return s, err
		}),
	)
}
