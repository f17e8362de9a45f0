package mesostest

import (
	"container/heap"
	"crypto/rand"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// phase is what happens to a task when its deadline passes.
type phase uint8

const (
	phaseNone phase = iota
	phaseStarting
	phaseRunning
	phaseLive // running: it ends, or its checks are due
	phaseKill
)

// task is a task on an emulated agent. It stays known to the master while
// it is active, and after it ended until its terminal update is
// acknowledged.
type task struct {
	id       string
	fw       *framework
	agent    *agent
	sum      resSum
	extra    mesos.Resources // ports, reserved scalars, volumes (unallocated)
	state    mesos.TaskState
	seq      uint64 // launch order
	duration time.Duration
	exitCode int
	// deadline heap position
	due   time.Time
	next  phase
	index int
	// pending holds agent-generated updates not yet acknowledged; the
	// first has been sent at sentAt.
	pending []mesos.TaskStatus
	sentAt  time.Time
	probes
	killer
}

func (t *task) terminal() bool { return isTerminal(t.state) }

func isTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_ERROR,
		mesos.TASK_LOST, mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}

// taskHeap orders tasks by their next deadline.
type taskHeap []*task

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h taskHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *taskHeap) Push(x any) {
	t := x.(*task)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// schedule sets a task's next phase.
func (m *Master) schedule(t *task, p phase, at time.Time) {
	t.next, t.due = p, at
	if t.index >= 0 {
		heap.Fix(&m.tasks, t.index)
		return
	}
	heap.Push(&m.tasks, t)
}

func (m *Master) unschedule(t *task) {
	if t.index >= 0 {
		heap.Remove(&m.tasks, t.index)
	}
	t.next = phaseNone
}

// advanceTasks carries out every phase that is due.
func (m *Master) advanceTasks(now time.Time) {
	for len(m.tasks) > 0 && !m.tasks[0].due.After(now) {
		t := heap.Pop(&m.tasks).(*task)
		p := t.next
		t.next = phaseNone
		switch p {
		case phaseStarting:
			t.state = mesos.TASK_STARTING
			m.agentUpdate(t, mesos.TASK_STARTING, nil, "")
			m.schedule(t, phaseRunning, now)
		case phaseRunning:
			t.state = mesos.TASK_RUNNING
			m.stats.TasksRunning++
			m.startProbes(t, now)
			m.agentUpdate(t, mesos.TASK_RUNNING, nil, "")
			t.endAt = now.Add(t.duration)
			m.scheduleLive(t)
		case phaseLive:
			if !now.Before(t.endAt) {
				m.finish(t)
				continue
			}
			m.probe(t, now)
			if !t.terminal() {
				m.scheduleLive(t)
			}
		case phaseKill:
			m.endTask(t, mesos.TASK_KILLED, -1, t.killMessage(), true)
		}
	}
}

// finish ends a task whose run time is over, with its exit code.
func (m *Master) finish(t *task) {
	if t.exitCode == 0 {
		m.endTask(t, mesos.TASK_FINISHED, -1, "Command exited with status 0", true)
		return
	}
	m.endTask(t, mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED,
		"Command exited with status "+strconv.Itoa(t.exitCode), true)
}

// release gives a task's resources back to its agent.
func (m *Master) release(t *task) {
	t.agent.used = t.agent.used.sub(t.sum)
	t.agent.extra.Add(t.extra...)
	t.extra = nil
	delete(t.agent.tasks, t.id)
}

// endTask moves a task to a terminal state and frees its resources. An
// agent-generated end is reported reliably (with a uuid); a
// master-generated one once, and the task is forgotten at once.
func (m *Master) endTask(t *task, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string, fromAgent bool) {
	if t.terminal() {
		return
	}
	m.unschedule(t)
	t.state = state
	m.release(t)
	switch state {
	case mesos.TASK_FINISHED:
		m.stats.TasksFinished++
	case mesos.TASK_FAILED, mesos.TASK_ERROR:
		m.stats.TasksFailed++
	case mesos.TASK_KILLED:
		m.stats.TasksKilled++
	default:
		m.stats.TasksLost++
	}
	var r *mesos.TaskStatus_Reason
	if reason >= 0 {
		r = &reason
	}
	if fromAgent {
		m.agentUpdate(t, state, r, msg)
		return
	}
	delete(t.fw.tasks, t.id)
	m.masterUpdate(t.fw, t.id, t.agent.spec.ID, state, r, msg)
}

func (m *Master) status(taskID, agentID string, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string, src mesos.TaskStatus_Source) mesos.TaskStatus {
	ts := float64(m.clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: taskID}, State: &state, Source: &src, Reason: reason, Timestamp: &ts}
	if agentID != "" {
		st.AgentID = &mesos.AgentID{Value: agentID}
	}
	if msg != "" {
		st.Message = &msg
	}
	return st
}

// agentUpdate queues a reliable update: sent now if it is the only one
// pending, resent until acknowledged.
func (m *Master) agentUpdate(t *task, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string) {
	st := m.status(t.id, t.agent.spec.ID, state, reason, msg, mesos.SOURCE_EXECUTOR)
	t.annotate(&st)
	st.UUID = newUUID()
	t.pending = append(t.pending, st)
	if len(t.pending) == 1 {
		m.sendHead(t)
	}
}

func (m *Master) sendHead(t *task) {
	if len(t.pending) == 0 || t.agent.unreachable {
		return
	}
	t.sentAt = m.clock.Now()
	st := t.pending[0]
	m.send(t.fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
}

// masterUpdate sends an update the master generated; it carries no uuid
// and is not retried.
func (m *Master) masterUpdate(fw *framework, taskID, agentID string, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string) {
	st := m.status(taskID, agentID, state, reason, msg, mesos.SOURCE_MASTER)
	m.send(fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
}

// acknowledge pops a task's first pending update when uuid matches it.
func (m *Master) acknowledge(fw *framework, taskID string, uuid []byte) {
	t := fw.tasks[taskID]
	if t == nil || len(t.pending) == 0 || string(t.pending[0].UUID) != string(uuid) {
		return
	}
	m.stats.Acks++
	t.pending = t.pending[1:]
	if len(t.pending) > 0 {
		m.sendHead(t)
		return
	}
	if t.terminal() {
		delete(fw.tasks, t.id)
	}
}

// retryUpdates resends first pending updates not acknowledged in time.
func (m *Master) retryUpdates(now time.Time) {
	// Scanning every task each tick would dominate large clusters; a
	// quarter of the retry interval is precise enough.
	if now.Sub(m.lastRetryScan) < m.cfg.UpdateRetry/4 {
		return
	}
	m.lastRetryScan = now
	for _, fw := range m.frameworks {
		if fw.sub == nil {
			continue
		}
		for _, t := range fw.tasks {
			if len(t.pending) > 0 && now.Sub(t.sentAt) >= m.cfg.UpdateRetry && !t.agent.unreachable {
				m.sendHead(t)
			}
		}
	}
}

func newUUID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b
}

// taskEnv reads the emulated duration, exit code and probe results of a
// task.
func (m *Master) taskEnv(t *task, ti *mesos.TaskInfo) {
	t.duration, t.exitCode = m.cfg.TaskDuration, 0
	t.envHealthy, t.envReady = true, true
	t.policy, t.stopDelay = -1, 0
	if g := ti.GetKillPolicy().GetGracePeriod(); g != nil {
		t.policy = max(time.Duration(g.GetNanoseconds()), 0)
	}
	if ti.Command == nil || ti.Command.Environment == nil {
		return
	}
	for _, v := range ti.Command.Environment.Variables {
		switch v.Name {
		case EnvDuration:
			if x, err := time.ParseDuration(v.GetValue()); err == nil && x >= 0 {
				t.duration = x
			}
		case EnvExitCode:
			if x, err := strconv.Atoi(v.GetValue()); err == nil {
				t.exitCode = x
			}
		case EnvStopDelay:
			if x, err := time.ParseDuration(v.GetValue()); err == nil && x >= 0 {
				t.stopDelay = x
			}
		case EnvHealthy:
			t.envHealthy = v.GetValue() != "false"
		case EnvReady:
			t.envReady = v.GetValue() != "false"
		}
	}
}
