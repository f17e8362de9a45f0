package ha

import (
	"fmt"
	"testing"
	"time"
)

// periodicRun is a run as GET /v1/jobs?runOf= lists it.
type periodicRun struct {
	ID     string `json:"id"`
	Status struct {
		State      string    `json:"state"`
		CreateTime time.Time `json:"createTime"`
		RunOf      struct {
			JobID    string    `json:"jobId"`
			TickTime time.Time `json:"tickTime"`
		} `json:"runOf"`
	} `json:"status"`
}

// TestPeriodicTickAcrossFailover: a job runs every minute on an HA pair on
// Cassandra. Its leader is SIGSTOPped at one tick (past its lease, then
// SIGCONTed) and the new leader killed -9 at the next: every tick since
// the job was created launches exactly one run, none is skipped (the
// starting deadline covers a takeover) and none twice.
func TestPeriodicTickAcrossFailover(t *testing.T) {
	cass := cassandraAddr(t)
	keyspace := fmt.Sprintf("peloton_cron_%d", time.Now().UnixNano()%1e9)
	dropKeyspaceAfter(t, cass, keyspace)
	members := startRegion(t, regionSpec{members: 2, cassandra: cass, keyspace: keyspace,
		sim: "sim,hosts=4,cpu=8,mem=65536,duration=1s", extra: "ha: {leaseTTL: 3s}"})
	leaderOf := func() (*member, *member) {
		for i, m := range members {
			if m.alive() && m.leading() {
				return m, members[1-i]
			}
		}
		return nil, nil
	}
	waitFor(t, 60*time.Second, "a leader", func() bool { l, _ := leaderOf(); return l != nil })
	waitFor(t, 30*time.Second, "both members healthy", func() bool { return members[0].healthy() && members[1].healthy() })
	leader, standby := leaderOf()

	job := standby.CreateJob(`{"name":"every-minute","instances":1,
		"schedule":{"cron":"* * * * *","startingDeadlineSeconds":120,"keepRuns":20},
		"task":{"command":"sim","resources":{"cpu":0.1,"memMb":1}}}`)
	firstTick := time.Now().Truncate(time.Minute).Add(time.Minute)

	// untilTick waits for the wall clock to reach the next minute.
	untilTick := func() time.Time {
		next := time.Now().Truncate(time.Minute).Add(time.Minute)
		time.Sleep(time.Until(next))
		return next
	}
	// Fault 1: SIGSTOP the leader at a tick, past its lease.
	paused := untilTick()
	if err := leader.pause(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the standby leading", func() bool { return standby.leading() })
	if err := leader.resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the resumed member to stop leading", func() bool { return !leader.leading() })
	leader, standby = standby, leader
	// Fault 2: kill -9 the new leader at the next tick.
	killed := untilTick()
	leader.kill()
	waitFor(t, 60*time.Second, "the other member leading", func() bool { return standby.leading() })
	last := untilTick()
	time.Sleep(5 * time.Second)

	var runs struct {
		Jobs []periodicRun `json:"jobs"`
	}
	if err := standby.Get("/v1/jobs?runOf="+job, &runs); err != nil {
		t.Fatal(err)
	}
	perTick := map[time.Time]int{}
	late := map[string]string{}
	for _, run := range runs.Jobs {
		tick := run.Status.RunOf.TickTime.UTC()
		perTick[tick]++
		late[tick.Format("15:04")] = run.Status.CreateTime.Sub(tick).Round(100 * time.Millisecond).String()
	}
	t.Logf("ticks %s (first) to %s; SIGSTOP at %s, kill -9 at %s; runs per tick: %v; each run created after its tick by %v",
		firstTick.Format("15:04"), last.Format("15:04"), paused.Format("15:04"), killed.Format("15:04"), perTick, late)
	for tick := firstTick; !tick.After(last); tick = tick.Add(time.Minute) {
		if n := perTick[tick.UTC()]; n != 1 {
			t.Errorf("tick %s launched %d runs, want 1", tick.Format("15:04"), n)
		}
		delete(perTick, tick.UTC())
	}
	if len(perTick) > 0 {
		t.Errorf("runs for ticks outside the run: %v", perTick)
	}
	var parent struct {
		Job struct {
			Status struct {
				Periodic struct {
					Launched string `json:"launched"`
					Missed   string `json:"missed"`
				} `json:"periodic"`
			} `json:"status"`
		} `json:"job"`
	}
	if err := standby.Get("/v1/jobs/"+job, &parent); err != nil {
		t.Fatal(err)
	}
	if p := parent.Job.Status.Periodic; p.Missed != "" && p.Missed != "0" {
		t.Errorf("ticks missed: %s", p.Missed)
	}
}
