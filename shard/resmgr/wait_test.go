package resmgr

import (
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/resmgr/entitlement"
)

// waitTree builds pools from (path, reservation cpu, limit cpu; 0: none).
func waitTree(t *testing.T, pools ...struct {
	path       string
	res, limit int64
}) *entitlement.Tree {
	t.Helper()
	var specs []entitlement.PoolSpec
	for _, p := range pools {
		limit := model.Resources{MilliCPU: model.Unlimited, MemMB: model.Unlimited, DiskMB: model.Unlimited, GPU: model.Unlimited}
		if p.limit > 0 {
			limit.MilliCPU = p.limit
		}
		specs = append(specs, entitlement.PoolSpec{Path: p.path, Reservation: model.Resources{MilliCPU: p.res}, Limit: limit, Share: model.EqualShares(1)})
	}
	tree, err := entitlement.NewTree(specs)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

type pool = struct {
	path       string
	res, limit int64
}

// gangN is gang n of job, one task of cpu millicores.
func gangN(job string, n uint32, path string, cpu int64, preemptible bool) Gang {
	g := gangOf(job, path, 1, cpu)
	g.ID.Gang, g.Members[0].Task.Instance, g.Preemptible = n, n, preemptible
	return g
}

func TestWhyAGangWaits(t *testing.T) {
	capacity := model.Resources{MilliCPU: 10000, MemMB: 1 << 20, DiskMB: 1 << 20, GPU: 8}
	cases := []struct {
		name  string
		pools []pool
		// setup queues gangs and runs passes; ask is the gang asked about.
		setup    func(t *testing.T, s *Scheduler)
		ask      GangID
		want     string
		position int
	}{
		{"entitlement shared with another pool", []pool{{"/", 0, 0}, {"/a", 0, 0}, {"/b", 0, 0}},
			func(t *testing.T, s *Scheduler) {
				for i := range uint32(8) {
					mustEnqueue(t, s, gangN("a", i, "/a", 1000, true))
					mustEnqueue(t, s, gangN("b", i, "/b", 1000, true))
				}
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "a", Gang: 5}, "waiting for pool /a's entitlement (cpu 5/5), needs 1", 1},
		{"behind the gang that waits", []pool{{"/", 0, 0}, {"/a", 0, 0}, {"/b", 0, 0}},
			func(t *testing.T, s *Scheduler) {
				for i := range uint32(8) {
					mustEnqueue(t, s, gangN("a", i, "/a", 1000, true))
					mustEnqueue(t, s, gangN("b", i, "/b", 1000, true))
				}
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "a", Gang: 7}, "waiting for pool /a's entitlement (cpu 5/5), needs 1, behind a gang that waits for it", 3},
		{"a parent's limit", []pool{{"/", 0, 0}, {"/team", 0, 3000}, {"/team/x", 0, 0}},
			func(t *testing.T, s *Scheduler) {
				for i := range uint32(4) {
					mustEnqueue(t, s, gangN("x", i, "/team/x", 1000, true))
				}
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "x", Gang: 3}, "waiting for pool /team's limit (cpu 3/3), needs 1", 1},
		{"non-preemptible work within the reservation", []pool{{"/", 10000, 0}, {"/a", 2000, 0}},
			func(t *testing.T, s *Scheduler) {
				for i := range uint32(3) {
					mustEnqueue(t, s, gangN("a", i, "/a", 1000, false))
				}
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "a", Gang: 2}, "waiting for pool /a's reservation (cpu 2/2), needs 1", 1},
		{"larger than the reservation", []pool{{"/", 10000, 0}, {"/a", 2000, 0}},
			func(t *testing.T, s *Scheduler) {
				mustEnqueue(t, s, gangN("a", 0, "/a", 2500, false))
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "a"}, "can never fit pool /a's reservation (cpu: needs 2.5, has 2)", 0},
		{"larger than the cluster", []pool{{"/", 0, 0}, {"/a", 0, 0}},
			func(t *testing.T, s *Scheduler) {
				mustEnqueue(t, s, gangN("a", 0, "/a", 12000, true))
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "a"}, "larger than the whole cluster (cpu: needs 12, has 10)", 1},
		{"the job's maxRunning", []pool{{"/", 0, 0}, {"/a", 0, 0}},
			func(t *testing.T, s *Scheduler) {
				s.SetJobLimit("a", 1)
				mustEnqueue(t, s, gangN("a", 0, "/a", 1000, true))
				mustEnqueue(t, s, gangN("a", 1, "/a", 1000, true))
				s.Pass(PassInput{Capacity: capacity})
			},
			GangID{Job: "a", Gang: 1}, "waiting for its job's maxRunning (1/1 admitted)", 1},
		{"queued after the pass", []pool{{"/", 0, 0}, {"/a", 0, 0}},
			func(t *testing.T, s *Scheduler) {
				s.Pass(PassInput{Capacity: capacity})
				mustEnqueue(t, s, gangN("a", 0, "/a", 1000, true))
			},
			GangID{Job: "a"}, "waiting for the next admission pass", 1},
		{"the gang that stopped admission is gone", []pool{{"/", 0, 0}, {"/a", 0, 2000}},
			func(t *testing.T, s *Scheduler) {
				for i := range uint32(4) {
					mustEnqueue(t, s, gangN("a", i, "/a", 1000, true))
				}
				s.Pass(PassInput{Capacity: capacity})
				s.Remove(GangID{Job: "a", Gang: 2})
			},
			GangID{Job: "a", Gang: 3}, "waiting for the next admission pass", 1},
		{"lower priority gangs preempted for it", []pool{{"/", 0, 0}, {"/a", 0, 2000}},
			func(t *testing.T, s *Scheduler) {
				mustEnqueue(t, s, gangN("low", 0, "/a", 1000, true))
				mustEnqueue(t, s, gangN("low", 1, "/a", 1000, true))
				s.Pass(PassInput{Capacity: capacity})
				high := gangN("high", 0, "/a", 1000, true)
				high.Priority = 5
				mustEnqueue(t, s, high)
				if d := s.Pass(PassInput{Capacity: capacity}); len(d.Preempt) != 1 {
					t.Fatalf("preempted %v", d.Preempt)
				}
				s.Pass(PassInput{Capacity: capacity}) // still waiting for the kill
			},
			GangID{Job: "high"}, "waiting for 1 preempted gangs of pool /a to end", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(waitTree(t, tc.pools...), Config{})
			tc.setup(t, s)
			w, ok := s.Why(tc.ask)
			if !ok {
				t.Fatalf("Why(%v): not waiting", tc.ask)
			}
			if got := w.String(); got != tc.want {
				t.Errorf("Why(%v) = %q\n                want %q", tc.ask, got, tc.want)
			}
			if got := s.Position(tc.ask); got != tc.position {
				t.Errorf("Position(%v) = %d, want %d", tc.ask, got, tc.position)
			}
		})
	}
}

func TestAdmittedGangsDoNotWait(t *testing.T) {
	s := New(waitTree(t, pool{"/", 0, 0}, pool{"/a", 0, 0}), Config{})
	mustEnqueue(t, s, gangN("a", 0, "/a", 1000, true))
	s.Pass(PassInput{Capacity: model.Resources{MilliCPU: 4000}})
	if w, ok := s.Why(GangID{Job: "a"}); ok {
		t.Fatalf("an admitted gang waits: %v", w)
	}
	if _, ok := s.Why(GangID{Job: "nope"}); ok {
		t.Fatal("an unknown gang waits")
	}
}

func mustEnqueue(t *testing.T, s *Scheduler, g Gang) {
	t.Helper()
	if err := s.Enqueue(g); err != nil {
		t.Fatal(err)
	}
}
