package mesostest

import (
	"fmt"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// handleCall validates and carries out a non-SUBSCRIBE call; it returns
// the HTTP status and, for errors, the message.
func (m *Master) handleCall(call *scheduler.Call, streamID string) (int, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stats.Calls[call.Type.String()]++
	if call.FrameworkID == nil || call.FrameworkID.Value == "" {
		return http.StatusBadRequest, "Expecting 'framework_id' to be present"
	}
	fw := m.frameworks[call.FrameworkID.Value]
	if fw == nil {
		return http.StatusForbidden, "Framework cannot be found"
	}
	if fw.sub == nil {
		return http.StatusForbidden, "Framework is not subscribed"
	}
	if streamID == "" {
		return http.StatusBadRequest, "All non-subscribe calls should include the 'Mesos-Stream-Id' header"
	}
	if streamID != fw.sub.streamID {
		return http.StatusBadRequest, fmt.Sprintf("The stream ID '%s' included in this request didn't match the stream ID currently associated with framework ID %s", streamID, fw.id)
	}
	now := m.clock.Now()
	switch call.Type {
	case scheduler.Call_TEARDOWN:
		m.teardown(fw)
	case scheduler.Call_ACCEPT:
		if call.Accept == nil {
			return http.StatusBadRequest, "Expecting 'accept' to be present"
		}
		m.accept(fw, call.Accept, now)
	case scheduler.Call_DECLINE:
		if call.Decline == nil {
			return http.StatusBadRequest, "Expecting 'decline' to be present"
		}
		refuse := refuseFor(call.Decline.Filters)
		for _, id := range call.Decline.OfferIDs {
			o := m.offers[id.Value]
			if o == nil || o.fw != fw {
				continue
			}
			m.recover(o)
			m.stats.OffersDecline++
			if refuse > 0 {
				fw.filters[o.agent.spec.ID] = now.Add(refuse)
			}
		}
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		if call.AcceptInverseOffers == nil {
			return http.StatusBadRequest, "Expecting 'accept_inverse_offers' to be present"
		}
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		if call.DeclineInverseOffers == nil {
			return http.StatusBadRequest, "Expecting 'decline_inverse_offers' to be present"
		}
	case scheduler.Call_REVIVE:
		fw.filters = map[string]time.Time{}
		fw.suppress = false
	case scheduler.Call_SUPPRESS:
		fw.suppress = true
	case scheduler.Call_KILL:
		if call.Kill == nil {
			return http.StatusBadRequest, "Expecting 'kill' to be present"
		}
		m.kill(fw, call.Kill, now)
	case scheduler.Call_ACKNOWLEDGE:
		ack := call.Acknowledge
		if ack == nil {
			return http.StatusBadRequest, "Expecting 'acknowledge' to be present"
		}
		if len(ack.UUID) != 16 {
			return http.StatusBadRequest, "Failed to parse UUID: not 16 bytes"
		}
		m.acknowledge(fw, ack.TaskID.Value, ack.UUID)
	case scheduler.Call_RECONCILE:
		if call.Reconcile == nil {
			return http.StatusBadRequest, "Expecting 'reconcile' to be present"
		}
		m.reconcile(fw, call.Reconcile.Tasks)
	case scheduler.Call_SHUTDOWN, scheduler.Call_MESSAGE, scheduler.Call_REQUEST:
		// Custom executors and allocator requests: nothing to emulate.
	default:
		return http.StatusBadRequest, fmt.Sprintf("Unsupported call type %s", call.Type)
	}
	return http.StatusAccepted, ""
}

func refuseFor(f *mesos.Filters) time.Duration {
	// Filters absent means the default filter (refuse_seconds = 5).
	if f == nil {
		return defaultRefuse
	}
	return time.Duration(f.GetRefuseSeconds() * float64(time.Second))
}

// accept carries out an ACCEPT: offers are validated first (unknown,
// foreign, repeated or spread over agents make every task of the call
// TASK_DROPPED or TASK_LOST), then each task against what the offers hold.
// What the operations leave unused goes back to the agent.
func (m *Master) accept(fw *framework, acc *scheduler.Call_Accept, now time.Time) {
	var offers []*offer
	invalid := ""
	seen := map[string]bool{}
	if len(acc.OfferIDs) == 0 {
		invalid = "No offers specified"
	}
	for _, id := range acc.OfferIDs {
		o := m.offers[id.Value]
		switch {
		case seen[id.Value]:
			invalid = "Duplicate offer " + id.Value + " in the same call"
		case o == nil:
			invalid = "Offer " + id.Value + " is no longer valid"
		case o.fw != fw:
			invalid = "Offer " + id.Value + " is not for framework " + fw.id
		case len(offers) > 0 && o.agent != offers[0].agent:
			invalid = "Aggregated offers must belong to one single agent"
		}
		seen[id.Value] = true
		if o != nil && o.fw == fw && m.offers[id.Value] != nil {
			offers = append(offers, o)
			m.recover(o)
		}
	}
	if invalid != "" {
		state := mesos.TASK_LOST
		if fw.partition {
			state = mesos.TASK_DROPPED
		}
		reason := mesos.REASON_INVALID_OFFERS
		for _, op := range acc.Operations {
			for _, ti := range launchedTasks(&op) {
				m.masterUpdate(fw, ti.TaskID.Value, ti.AgentID.Value, state, &reason, "Task launched with invalid offers: "+invalid)
			}
		}
		return
	}
	a := offers[0].agent
	var avail resSum
	for _, o := range offers {
		avail = avail.add(o.sum)
	}
	for i := range acc.Operations {
		op := &acc.Operations[i]
		switch op.GetType() {
		case mesos.Offer_Operation_LAUNCH:
			if op.Launch == nil {
				continue
			}
			for j := range op.Launch.TaskInfos {
				m.launch(fw, a, &avail, &op.Launch.TaskInfos[j], now)
			}
		case mesos.Offer_Operation_LAUNCH_GROUP:
			m.launchGroup(fw, a, &avail, op.LaunchGroup, now)
		}
	}
	if refuse := refuseFor(acc.Filters); refuse > 0 && avail.offerable() {
		fw.filters[a.spec.ID] = now.Add(refuse)
	}
}

func launchedTasks(op *mesos.Offer_Operation) []mesos.TaskInfo {
	switch {
	case op.Launch != nil:
		return op.Launch.TaskInfos
	case op.LaunchGroup != nil:
		return op.LaunchGroup.TaskGroup.Tasks
	}
	return nil
}

// validateTask returns why the master would refuse a task, or "".
func (m *Master) validateTask(fw *framework, a *agent, ti *mesos.TaskInfo, group bool) (resSum, string) {
	switch {
	case ti.TaskID.Value == "":
		return resSum{}, "Task ID must not be empty"
	case fw.tasks[ti.TaskID.Value] != nil:
		return resSum{}, "Task has duplicate ID: " + ti.TaskID.Value
	case ti.AgentID.Value != a.spec.ID:
		return resSum{}, "Task uses agent ID " + ti.AgentID.Value + " which differs from the offers' agent " + a.spec.ID
	case !group && (ti.Command == nil) == (ti.Executor == nil):
		return resSum{}, "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"
	case group && ti.Command == nil:
		return resSum{}, "Task in a group must have CommandInfo"
	case len(ti.Resources) == 0:
		return resSum{}, "Task uses no resources"
	}
	sum, err := sumOf(ti.Resources, fw.role, fw.multiRole)
	if err != nil {
		return resSum{}, "Task uses invalid resources: " + err.Error()
	}
	return sum, ""
}

func (m *Master) launch(fw *framework, a *agent, avail *resSum, ti *mesos.TaskInfo, now time.Time) {
	sum, msg := m.validateTask(fw, a, ti, false)
	if msg == "" && !sum.fits(*avail) {
		msg = "Task uses more resources than available in the offers"
	}
	if msg != "" {
		reason := mesos.REASON_TASK_INVALID
		m.masterUpdate(fw, ti.TaskID.Value, a.spec.ID, mesos.TASK_ERROR, &reason, msg)
		return
	}
	*avail = avail.sub(sum)
	m.startTask(fw, a, ti, sum, now)
}

// launchGroup launches all tasks of a group or none.
func (m *Master) launchGroup(fw *framework, a *agent, avail *resSum, lg *mesos.Offer_Operation_LaunchGroup, now time.Time) {
	if lg == nil {
		return
	}
	var total resSum
	sums := make([]resSum, len(lg.TaskGroup.Tasks))
	msg := ""
	if lg.Executor.Type != mesos.ExecutorInfo_DEFAULT {
		msg = "LAUNCH_GROUP needs an executor of type DEFAULT"
	}
	ids := map[string]bool{}
	for i := range lg.TaskGroup.Tasks {
		if msg != "" {
			break
		}
		ti := &lg.TaskGroup.Tasks[i]
		if ids[ti.TaskID.Value] {
			msg = "Duplicate task ID " + ti.TaskID.Value + " in the task group"
			break
		}
		ids[ti.TaskID.Value] = true
		sums[i], msg = m.validateTask(fw, a, ti, true)
		total = total.add(sums[i])
	}
	if msg == "" {
		if es, err := sumOf(lg.Executor.Resources, fw.role, fw.multiRole); err != nil {
			msg = "Executor uses invalid resources: " + err.Error()
		} else {
			total = total.add(es)
		}
	}
	if msg == "" && !total.fits(*avail) {
		msg = "Task group uses more resources than available in the offers"
	}
	if msg != "" {
		reason := mesos.REASON_TASK_GROUP_INVALID
		for i := range lg.TaskGroup.Tasks {
			m.masterUpdate(fw, lg.TaskGroup.Tasks[i].TaskID.Value, a.spec.ID, mesos.TASK_ERROR, &reason, msg)
		}
		return
	}
	*avail = avail.sub(total)
	for i := range lg.TaskGroup.Tasks {
		m.startTask(fw, a, &lg.TaskGroup.Tasks[i], sums[i], now)
	}
}

func (m *Master) startTask(fw *framework, a *agent, ti *mesos.TaskInfo, sum resSum, now time.Time) {
	d, code := m.taskEnv(ti)
	t := &task{id: ti.TaskID.Value, fw: fw, agent: a, sum: sum, state: mesos.TASK_STAGING, duration: d, exitCode: code, index: -1}
	a.used = a.used.add(sum)
	a.tasks[t.id] = t
	fw.tasks[t.id] = t
	m.stats.TasksLaunched++
	m.schedule(t, phaseStarting, now)
}

// kill ends a known task at the next tick; an unknown one is answered
// TASK_LOST, as the docs say.
func (m *Master) kill(fw *framework, k *scheduler.Call_Kill, now time.Time) {
	t := fw.tasks[k.TaskID.Value]
	if t == nil {
		agentID := ""
		if k.AgentID != nil {
			agentID = k.AgentID.Value
		}
		reason := mesos.REASON_RECONCILIATION
		m.masterUpdate(fw, k.TaskID.Value, agentID, mesos.TASK_LOST, &reason, "Attempted to kill an unknown task")
		return
	}
	if t.terminal() {
		return
	}
	m.schedule(t, phaseKill, now)
}

// reconcile answers RECONCILE: with no tasks, the latest state of every
// task the master knows; otherwise, for each task asked about, its latest
// state, or TASK_GONE / TASK_UNKNOWN (partition-aware) or TASK_LOST when
// the master does not know it.
func (m *Master) reconcile(fw *framework, tasks []scheduler.Call_Reconcile_Task) {
	reason := mesos.REASON_RECONCILIATION
	if len(tasks) == 0 {
		for _, t := range fw.tasks {
			m.masterUpdate(fw, t.id, t.agent.spec.ID, t.state, &reason, "Reconciliation: latest task state")
		}
		return
	}
	for _, q := range tasks {
		agentID := ""
		if q.AgentID != nil {
			agentID = q.AgentID.Value
		}
		if t := fw.tasks[q.TaskID.Value]; t != nil {
			m.masterUpdate(fw, t.id, t.agent.spec.ID, t.state, &reason, "Reconciliation: latest task state")
			continue
		}
		state := mesos.TASK_LOST
		msg := "Reconciliation: task is unknown"
		switch {
		case fw.partition && agentID != "" && m.removed[agentID]:
			state, msg = mesos.TASK_GONE, "Reconciliation: task is unknown to the removed agent"
		case fw.partition:
			state = mesos.TASK_UNKNOWN
		}
		m.masterUpdate(fw, q.TaskID.Value, agentID, state, &reason, msg)
	}
}

// teardown removes a framework: its tasks are killed, its offers
// recovered, its id refused from now on.
func (m *Master) teardown(fw *framework) {
	for _, t := range fw.tasks {
		if !t.terminal() {
			m.unschedule(t)
			t.agent.used = t.agent.used.sub(t.sum)
			delete(t.agent.tasks, t.id)
		}
	}
	for _, o := range fw.offers {
		m.recover(o)
	}
	for _, a := range m.agentOrder {
		delete(a.inverse, fw.id)
	}
	if fw.sub != nil {
		close(fw.sub.closed)
		fw.sub = nil
	}
	delete(m.frameworks, fw.id)
	m.removedFw[fw.id] = true
}
