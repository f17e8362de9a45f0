package metrics

import (
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr"
	"github.com/prometheus/client_golang/prometheus"
)

func TestCollectorExportsSnapshot(t *testing.T) {
	h := jobmgr.Histogram{Bounds: []float64{0.1, 1}, Counts: []uint64{2, 1, 1}, Count: 4, Sum: 3.5}
	stats := jobmgr.Stats{
		Tasks: map[jobmgr.PoolState]int{{Pool: "/a", State: model.TaskRunning}: 7},
		Pools: []resmgr.PoolFigures{{Path: "/a", Queued: 3,
			Reservation: model.Resources{MilliCPU: 2500, MemMB: 100},
			Limit:       model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited},
			Entitlement: model.Resources{MilliCPU: 1500}}},
		QueueWait:        map[string]jobmgr.Histogram{"/a": h},
		Preemptions:      map[string]uint64{"over_entitlement": 5},
		PlacementLatency: h,
		Launches:         map[string]uint64{"sim": 9},
		LaunchFailures:   map[string]uint64{},
	}
	leading := true
	c := NewCollector("east", func() (jobmgr.Stats, bool) { return stats, leading })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Gauge != nil:
				got[key] = m.Gauge.GetValue()
			case m.Counter != nil:
				got[key] = m.Counter.GetValue()
			case m.Histogram != nil:
				got[key+"count"] = float64(m.Histogram.GetSampleCount())
				for _, b := range m.Histogram.Bucket {
					got[key+"le"+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	for key, want := range map[string]float64{
		"peloton_resmgr_pool_entitlement_amount{pool=/a,region=east,resource=cpu_cores}": 1.5,
		"peloton_resmgr_pool_reservation_amount{pool=/a,region=east,resource=cpu_cores}": 2.5,
		"peloton_resmgr_pool_reservation_amount{pool=/a,region=east,resource=mem_mib}":   100,
		"peloton_resmgr_queue_gangs{pool=/a,region=east}":                                3,
		"peloton_jobmgr_tasks{pool=/a,region=east,state=RUNNING}":                        7,
		"peloton_resmgr_preemptions_total{reason=over_entitlement,region=east}":          5,
		"peloton_hostmgr_launches_total{cluster=sim,region=east}":                        9,
		"peloton_hostmgr_launch_failures_total{cluster=sim,region=east}":                 0,
		"peloton_resmgr_queue_wait_seconds{pool=/a,region=east}count":                    4,
		"peloton_resmgr_queue_wait_seconds{pool=/a,region=east}le0.1":                    2,
		"peloton_resmgr_queue_wait_seconds{pool=/a,region=east}le1":                      3,
		"peloton_placement_pass_duration_seconds{region=east}count":                      4,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	// Unlimited amounts are left out.
	for key := range got {
		if strings.HasPrefix(key, "peloton_resmgr_pool_limit_amount") {
			t.Errorf("%s exported for an unlimited pool", key)
		}
	}
	// A standby exports nothing of the shard.
	leading = false
	if fams, _ := reg.Gather(); len(fams) != 0 {
		t.Fatalf("standby exported %d families", len(fams))
	}
}

func TestNamesFollowTheConvention(t *testing.T) {
	for _, n := range Names {
		if !strings.HasPrefix(n, "peloton_") || strings.Count(n, "_") < 2 {
			t.Errorf("%s: want peloton_<area>_<what>_<unit>", n)
		}
	}
}
