package mesostest

import (
	"fmt"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Task environment variables the emulated executor obeys for probes: a
// task whose EnvHealthy is "false" fails its health check, one whose
// EnvReady is "false" fails its check. Test hooks (SetTaskHealthy,
// SetAgentHealthy, SetTaskReady) override them.
const (
	EnvHealthy = "PELOTON_SIM_HEALTHY"
	EnvReady   = "PELOTON_SIM_READY"
)

// minProbeInterval bounds how often a probe runs however small its
// interval.
const minProbeInterval = 10 * time.Millisecond

// probes is the health check and check state of a running task, as the
// command executor keeps it (docs/health-checks.md): a health check starts
// delay_seconds after TASK_RUNNING and runs every interval_seconds; a
// change of its verdict is sent as TASK_RUNNING with healthy set and
// reason REASON_TASK_HEALTH_CHECK_STATUS_UPDATED; failures within
// grace_period_seconds of the start count only once a check has passed;
// consecutive_failures failures in a row kill the task (TASK_KILLED,
// healthy false). A check (CheckInfo) reports its result in check_status
// with reason REASON_TASK_CHECK_STATUS_UPDATED, an empty result until the
// first one, and never kills.
type probes struct {
	health     *mesos.HealthCheck
	check      *mesos.CheckInfo
	envHealthy bool
	envReady   bool
	startedAt  time.Time
	endAt      time.Time
	healthAt   time.Time
	checkAt    time.Time
	healthy    *bool // last verdict sent
	failures   uint32
	passed     bool
	checkRes   *mesos.CheckStatusInfo // last check status sent
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

func interval(s float64) time.Duration {
	return max(seconds(s), minProbeInterval)
}

// annotate adds the latest health verdict and check status to an update.
func (p *probes) annotate(st *mesos.TaskStatus) {
	if p.healthy != nil {
		h := *p.healthy
		st.Healthy = &h
	}
	if p.checkRes != nil {
		c := *p.checkRes
		st.CheckStatus = &c
	}
}

func (m *Master) startProbes(t *task, now time.Time) {
	t.startedAt = now
	if t.health != nil {
		t.healthAt = now.Add(seconds(t.health.GetDelaySeconds()))
	}
	if t.check != nil {
		t.checkAt = now.Add(seconds(t.check.GetDelaySeconds()))
		typ := t.check.GetType()
		t.checkRes = &mesos.CheckStatusInfo{Type: &typ}
		switch typ {
		case mesos.CheckInfo_HTTP:
			t.checkRes.HTTP = &mesos.CheckStatusInfo_Http{}
		case mesos.CheckInfo_TCP:
			t.checkRes.TCP = &mesos.CheckStatusInfo_Tcp{}
		case mesos.CheckInfo_COMMAND:
			t.checkRes.Command = &mesos.CheckStatusInfo_Command{}
		}
	}
}

// scheduleLive schedules a running task's next event: its end or a probe.
func (m *Master) scheduleLive(t *task) {
	due := t.endAt
	if t.health != nil && t.healthAt.Before(due) {
		due = t.healthAt
	}
	if t.check != nil && t.checkAt.Before(due) {
		due = t.checkAt
	}
	m.schedule(t, phaseLive, due)
}

// probe runs the probes that are due.
func (m *Master) probe(t *task, now time.Time) {
	if t.health != nil && !now.Before(t.healthAt) {
		m.probeHealth(t, now)
		if t.terminal() {
			return
		}
	}
	if t.check != nil && !now.Before(t.checkAt) {
		m.probeCheck(t, now)
	}
}

func (m *Master) wantHealthy(t *task) bool {
	if v, ok := m.taskHealthy[t.id]; ok {
		return v
	}
	if t.agent.unhealthy {
		return false
	}
	return t.envHealthy
}

func (m *Master) probeHealth(t *task, now time.Time) {
	hc := t.health
	t.healthAt = now.Add(interval(hc.GetIntervalSeconds()))
	reason := mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED
	if m.wantHealthy(t) {
		t.failures, t.passed = 0, true
		if t.healthy == nil || !*t.healthy {
			ok := true
			t.healthy = &ok
			m.agentUpdate(t, mesos.TASK_RUNNING, &reason, "")
		}
		return
	}
	if !t.passed && now.Sub(t.startedAt) < seconds(hc.GetGracePeriodSeconds()) {
		return
	}
	t.failures++
	if t.healthy == nil || *t.healthy {
		bad := false
		t.healthy = &bad
		m.agentUpdate(t, mesos.TASK_RUNNING, &reason, "")
	}
	if t.failures >= hc.GetConsecutiveFailures() {
		m.stats.HealthKills++
		m.endTask(t, mesos.TASK_KILLED, -1,
			fmt.Sprintf("Task was killed after %d consecutive failed health checks", t.failures), true)
	}
}

func (m *Master) wantReady(t *task) bool {
	if v, ok := m.taskReady[t.id]; ok {
		return v
	}
	return t.envReady
}

func (m *Master) probeCheck(t *task, now time.Time) {
	ck := t.check
	t.checkAt = now.Add(interval(ck.GetIntervalSeconds()))
	ok := m.wantReady(t)
	typ := ck.GetType()
	res := &mesos.CheckStatusInfo{Type: &typ}
	switch typ {
	case mesos.CheckInfo_HTTP:
		code := uint32(200)
		if !ok {
			code = 503
		}
		res.HTTP = &mesos.CheckStatusInfo_Http{StatusCode: &code}
	case mesos.CheckInfo_TCP:
		res.TCP = &mesos.CheckStatusInfo_Tcp{Succeeded: &ok}
	case mesos.CheckInfo_COMMAND:
		code := int32(0)
		if !ok {
			code = 1
		}
		res.Command = &mesos.CheckStatusInfo_Command{ExitCode: &code}
	}
	if t.checkRes != nil && t.checkRes.Equal(res) {
		return
	}
	t.checkRes = res
	reason := mesos.REASON_TASK_CHECK_STATUS_UPDATED
	m.agentUpdate(t, mesos.TASK_RUNNING, &reason, "")
}

// SetAgentHealthy makes every health check of the agent's tasks fail
// (false) or follow the tasks' own switches again (true).
func (m *Master) SetAgentHealthy(agentID string, healthy bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[agentID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownAgent, agentID)
	}
	a.unhealthy = !healthy
	return nil
}

// SetTaskHealthy decides the health checks of a task, launched or not
// yet; it overrides the agent's switch and the task's environment.
func (m *Master) SetTaskHealthy(taskID string, healthy bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.taskHealthy[taskID] = healthy
}

// SetTaskReady decides the checks (CheckInfo) of a task, launched or not
// yet.
func (m *Master) SetTaskReady(taskID string, ready bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.taskReady[taskID] = ready
}
