package metrics

import (
	"math"

	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/prometheus/client_golang/prometheus"
)

// Source returns the stats of the engine that runs the region's shard now,
// and false on a member that does not lead it (a standby exports nothing
// of the shard).
type Source func() (jobmgr.Stats, bool)

// Collector exports a shard's figures on every scrape.
type Collector struct {
	region string
	source Source
}

// NewCollector returns the collector of one region's shard.
func NewCollector(region string, source Source) *Collector {
	return &Collector{region: region, source: source}
}

// Names lists every family the collector exports, for dashboards' tests.
var Names []string

func desc(name, help string, labels ...string) *prometheus.Desc {
	Names = append(Names, name)
	return prometheus.NewDesc(name, help, append([]string{"region"}, labels...), nil)
}

// The scheduler's metric families. Resource amounts carry their unit in
// the resource label: cpu_cores, mem_mib, disk_mib, gpus.
var (
	tasksDesc          = desc("peloton_jobmgr_tasks", "Tasks of unfinished jobs by leaf pool and state.", "pool", "state")
	updatesDesc        = desc("peloton_jobmgr_updates_in_progress", "Jobs with a rolling update in progress.")
	fencedDesc         = desc("peloton_jobmgr_fenced_bool", "1 while the shard is fenced (launches stopped).")
	queueDesc          = desc("peloton_resmgr_queue_gangs", "Gangs waiting for admission in the pool (parents sum their leaves).", "pool")
	parkedDesc         = desc("peloton_resmgr_parked_gangs", "Gangs that cannot fit the pool's reservation or limit.", "pool")
	admittedDesc       = desc("peloton_resmgr_admitted_gangs", "Gangs admitted and not finished.", "pool")
	waitDesc           = desc("peloton_resmgr_queue_wait_seconds", "How long admitted tasks waited in their leaf pool's queue.", "pool")
	reservationDesc    = desc("peloton_resmgr_pool_reservation_amount", "The pool's reservation (this region's share of a federation-wide pool).", "pool", "resource")
	limitDesc          = desc("peloton_resmgr_pool_limit_amount", "The pool's limit; absent when unlimited.", "pool", "resource")
	demandDesc         = desc("peloton_resmgr_pool_demand_amount", "Queued and admitted work of the pool as the last entitlement pass saw it.", "pool", "resource")
	allocationDesc     = desc("peloton_resmgr_pool_allocation_amount", "What admitted work of the pool holds.", "pool", "resource")
	entitlementDesc    = desc("peloton_resmgr_pool_entitlement_amount", "The pool's entitlement after the last pass.", "pool", "resource")
	preemptionsDesc    = desc("peloton_resmgr_preemptions_total", "Gangs preempted, by reason.", "reason")
	passesDesc         = desc("peloton_placement_passes_total", "Passes of the placement core.")
	placeLatencyDesc   = desc("peloton_placement_pass_duration_seconds", "How long a placement pass took.")
	placedDesc         = desc("peloton_placement_placed_tasks_total", "Tasks placed on a host.")
	unplacedDesc       = desc("peloton_placement_unplaced_tasks_total", "Tasks a pass found no host for, by reason.", "reason")
	launchesDesc       = desc("peloton_hostmgr_launches_total", "Runs handed to a cluster's host manager.", "cluster")
	launchFailuresDesc = desc("peloton_hostmgr_launch_failures_total", "Runs a cluster's host manager refused to launch.", "cluster")
	hostsDesc          = desc("peloton_hostmgr_hosts", "Hosts by cluster and state.", "cluster", "state")
	storeLatencyDesc   = desc("peloton_store_op_duration_seconds", "Latency of the store writes of the scheduling loop.", "op")
	passLatencyDesc    = desc("peloton_jobmgr_pass_part_duration_seconds", "Time of each part of the scheduling loop's passes: step and apply hold the engine's lock, write does not.", "part")
	storeErrorsDesc    = desc("peloton_store_op_errors_total", "Failed store writes of the scheduling loop.", "op")
)

// families are the descriptions of every family the collector exports.
var families = []*prometheus.Desc{
	tasksDesc, updatesDesc, fencedDesc, queueDesc, parkedDesc, admittedDesc, waitDesc,
	reservationDesc, limitDesc, demandDesc, allocationDesc, entitlementDesc, preemptionsDesc,
	passesDesc, placeLatencyDesc, placedDesc, unplacedDesc, launchesDesc, launchFailuresDesc,
	hostsDesc, storeLatencyDesc, storeErrorsDesc, passLatencyDesc,
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range families {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.source()
	if !ok {
		return
	}
	r := c.region
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{r}, labels...)...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{r}, labels...)...)
	}
	histogram := func(d *prometheus.Desc, h jobmgr.Histogram, labels ...string) {
		buckets := make(map[float64]uint64, len(h.Bounds))
		var cum uint64
		for i, b := range h.Bounds {
			cum += h.Counts[i]
			buckets[b] = cum
		}
		ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, append([]string{r}, labels...)...)
	}

	for k, n := range s.Tasks {
		gauge(tasksDesc, float64(n), k.Pool, k.State.String())
	}
	gauge(updatesDesc, float64(s.UpdatesRolling))
	gauge(fencedDesc, boolValue(s.Fenced))
	for _, p := range s.Pools {
		gauge(queueDesc, float64(p.Queued), p.Path)
		gauge(parkedDesc, float64(p.Parked), p.Path)
		gauge(admittedDesc, float64(p.Admitted), p.Path)
		amounts(gauge, reservationDesc, p.Path, p.Reservation)
		amounts(gauge, limitDesc, p.Path, p.Limit)
		amounts(gauge, demandDesc, p.Path, p.Demand)
		amounts(gauge, allocationDesc, p.Path, p.Allocation)
		amounts(gauge, entitlementDesc, p.Path, p.Entitlement)
	}
	for pool, h := range s.QueueWait {
		histogram(waitDesc, h, pool)
	}
	for reason, n := range s.Preemptions {
		counter(preemptionsDesc, n, reason)
	}
	counter(passesDesc, s.PlacementPasses)
	histogram(placeLatencyDesc, s.PlacementLatency)
	counter(placedDesc, s.Placed)
	for reason, n := range s.Unplaced {
		counter(unplacedDesc, n, reason)
	}
	for cluster, n := range s.Launches {
		counter(launchesDesc, n, cluster)
		counter(launchFailuresDesc, s.LaunchFailures[cluster], cluster)
	}
	for k, n := range s.Hosts {
		gauge(hostsDesc, float64(n), k[0], k[1])
	}
	for op, h := range s.StoreLatency {
		histogram(storeLatencyDesc, h, op)
		counter(storeErrorsDesc, s.StoreErrors[op], op)
	}
	for part, h := range s.PassLatency {
		histogram(passLatencyDesc, h, part)
	}
}

// amounts exports one amount per resource; unlimited amounts are left out.
func amounts(gauge func(*prometheus.Desc, float64, ...string), d *prometheus.Desc, pool string, r model.Resources) {
	for _, a := range []struct {
		name string
		v    int64
		unit float64
	}{{"cpu_cores", r.MilliCPU, 1000}, {"mem_mib", r.MemMB, 1}, {"disk_mib", r.DiskMB, 1}, {"gpus", r.GPU, 1}} {
		if a.v == model.Unlimited || a.v == math.MinInt64 {
			continue
		}
		gauge(d, float64(a.v)/a.unit, pool, a.name)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
