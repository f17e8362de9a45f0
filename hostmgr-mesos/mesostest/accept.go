package mesostest

import (
	"fmt"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// acceptPool is what an ACCEPT's offers still hold while its operations
// apply one after the other, as the master applies them to the offered
// resources.
type acceptPool struct {
	unres resSum
	extra mesos.Resources // allocated as offered
}

// take removes a task's resources from the pool; false (pool unchanged)
// when they are not all there.
func (p *acceptPool) take(sum resSum, extra mesos.Resources) bool {
	if !sum.fits(p.unres) || !containsAll(p.extra, extra) {
		return false
	}
	p.unres = p.unres.sub(sum)
	p.extra.Subtract(extra...)
	return true
}

// containsAll reports whether pool holds every one of want, counting each
// once (mesos-go's ContainsAll subtracts only persistent volumes).
func containsAll(pool, want mesos.Resources) bool {
	rest := pool.Clone()
	for i := range want {
		if !resources.Contains(rest, want[i]) {
			return false
		}
		rest.Subtract1(want[i])
	}
	return true
}

// accept carries out an ACCEPT: offers are validated first (unknown,
// foreign, repeated or spread over agents make every task of the call
// TASK_DROPPED or TASK_LOST), then the operations in order. An invalid
// RESERVE, UNRESERVE, CREATE or DESTROY is dropped, as the master drops
// it: with an operation id the framework gets OPERATION_ERROR, without
// one nothing, and a later LAUNCH that counted on it fails TASK_ERROR.
// What the operations leave unused goes back to the agent.
func (m *Master) accept(fw *framework, acc *scheduler.Call_Accept, now time.Time) {
	offers, invalid := m.takeOffers(fw, acc.OfferIDs)
	if invalid != "" {
		m.refuseOperations(fw, acc.Operations, invalid)
		return
	}
	a := offers[0].agent
	pool := m.poolOf(fw, offers)
	for i := range acc.Operations {
		m.operate(fw, a, pool, &acc.Operations[i], now)
	}
	a.extra.Add(unallocated(pool.extra)...)
	if refuse := refuseFor(acc.Filters); refuse > 0 && (pool.unres.offerable() || hasReserved(pool.extra)) {
		fw.filters[a.spec.ID] = now.Add(refuse)
	}
}

// takeOffers recovers the framework's offers among ids, returning them,
// and says why the offers are invalid (the last reason found), or "".
func (m *Master) takeOffers(fw *framework, ids []mesos.OfferID) ([]*offer, string) {
	var offers []*offer
	invalid := ""
	if len(ids) == 0 {
		invalid = "No offers specified"
	}
	seen := map[string]bool{}
	for _, id := range ids {
		o := m.offers[id.Value]
		if msg := offerProblem(fw, id.Value, o, seen, offers); msg != "" {
			invalid = msg
		}
		seen[id.Value] = true
		if o != nil && o.fw == fw && m.offers[id.Value] != nil {
			offers = append(offers, o)
			m.recover(o)
		}
	}
	return offers, invalid
}

// offerProblem says why offer id (o, nil when unknown) may not be accepted
// by fw together with the offers taken so far, or "".
func offerProblem(fw *framework, id string, o *offer, seen map[string]bool, taken []*offer) string {
	switch {
	case seen[id]:
		return "Duplicate offer " + id + " in the same call"
	case o == nil:
		return "Offer " + id + " is no longer valid"
	case o.fw != fw:
		return "Offer " + id + " is not for framework " + fw.id
	case len(taken) > 0 && o.agent != taken[0].agent:
		return "Aggregated offers must belong to one single agent"
	}
	return ""
}

// refuseOperations answers an ACCEPT with invalid offers: every task it
// launches is TASK_DROPPED (TASK_LOST for a framework that is not
// partition-aware) and every operation OPERATION_DROPPED.
func (m *Master) refuseOperations(fw *framework, ops []mesos.Offer_Operation, invalid string) {
	state := mesos.TASK_LOST
	if fw.partition {
		state = mesos.TASK_DROPPED
	}
	reason := mesos.REASON_INVALID_OFFERS
	for _, op := range ops {
		for _, ti := range launchedTasks(&op) {
			m.masterUpdate(fw, ti.TaskID.Value, ti.AgentID.Value, state, &reason, "Task launched with invalid offers: "+invalid)
		}
		m.operationStatus(fw, "", &op, mesos.OPERATION_DROPPED, "Operation with invalid offers: "+invalid)
	}
}

// poolOf returns what the accepted offers hold. The offers' resources
// went back to the agent in recover: unreserved scalars are free there
// unless a task or a reservation takes them; extras are taken out of the
// agent while the operations apply.
func (m *Master) poolOf(fw *framework, offers []*offer) *acceptPool {
	pool := &acceptPool{}
	for _, o := range offers {
		pool.unres = pool.unres.add(o.sum)
		pool.extra.Add(allocated(o.extra, fw)...)
	}
	offers[0].agent.extra.Subtract(unallocated(pool.extra)...)
	return pool
}

// operate applies one operation of an ACCEPT to the pool.
func (m *Master) operate(fw *framework, a *agent, pool *acceptPool, op *mesos.Offer_Operation, now time.Time) {
	switch op.GetType() {
	case mesos.Offer_Operation_LAUNCH:
		m.launchOperation(fw, a, pool, op, now)
	case mesos.Offer_Operation_LAUNCH_GROUP:
		m.launchGroup(fw, a, pool, op.LaunchGroup, now)
	case mesos.Offer_Operation_RESERVE, mesos.Offer_Operation_UNRESERVE,
		mesos.Offer_Operation_CREATE, mesos.Offer_Operation_DESTROY:
		if msg := m.applyOperation(fw, a, pool, op); msg != "" {
			m.dropOperation(fw, a, op, msg)
			return
		}
		m.stats.OperationsApplied++
		m.operationStatus(fw, a.spec.ID, op, mesos.OPERATION_FINISHED, "")
	default:
		m.dropOperation(fw, a, op, fmt.Sprintf("Operation type %s is not supported by this emulator", op.GetType()))
	}
}

// launchOperation launches the tasks of a LAUNCH one by one; the
// operation must not have an id.
func (m *Master) launchOperation(fw *framework, a *agent, pool *acceptPool, op *mesos.Offer_Operation, now time.Time) {
	if op.Launch == nil {
		m.dropOperation(fw, a, op, "Expecting 'launch' to be present")
		return
	}
	for j := range op.Launch.TaskInfos {
		ti := &op.Launch.TaskInfos[j]
		if op.ID != nil {
			reason := mesos.REASON_TASK_INVALID
			m.masterUpdate(fw, ti.TaskID.Value, a.spec.ID, mesos.TASK_ERROR, &reason, "An operation id must not be set on LAUNCH")
			continue
		}
		m.launch(fw, a, pool, ti, now)
	}
}

// dropOperation records an invalid operation; the framework hears of it
// only when the operation has an id.
func (m *Master) dropOperation(fw *framework, a *agent, op *mesos.Offer_Operation, msg string) {
	m.stats.OperationsDropped++
	m.dropped = append(m.dropped, fmt.Sprintf("%s: %s", op.GetType(), msg))
	m.operationStatus(fw, a.spec.ID, op, mesos.OPERATION_ERROR, msg)
}

// operationStatus sends UPDATE_OPERATION_STATUS for an operation that has
// an id. A finished operation's update comes from the agent and carries a
// uuid to acknowledge; an error's comes from the master and does not.
func (m *Master) operationStatus(fw *framework, agentID string, op *mesos.Offer_Operation, state mesos.OperationState, msg string) {
	if op.ID == nil {
		return
	}
	st := mesos.OperationStatus{OperationID: op.ID, State: state}
	if msg != "" {
		st.Message = &msg
	}
	if agentID != "" {
		st.AgentID = &mesos.AgentID{Value: agentID}
	}
	if state == mesos.OPERATION_FINISHED {
		st.UUID = &mesos.UUID{Value: newUUID()}
	}
	m.send(fw, &scheduler.Event{Type: scheduler.Event_UPDATE_OPERATION_STATUS,
		UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{Status: st}})
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

func (m *Master) launch(fw *framework, a *agent, pool *acceptPool, ti *mesos.TaskInfo, now time.Time) {
	sum, extra, msg := m.validateTask(fw, a, ti, false)
	if msg == "" && !pool.take(sum, extra) {
		msg = "Task uses more resources " + describe(ti.Resources) + " than available in the offers"
	}
	if msg != "" {
		reason := mesos.REASON_TASK_INVALID
		m.masterUpdate(fw, ti.TaskID.Value, a.spec.ID, mesos.TASK_ERROR, &reason, msg)
		return
	}
	m.startTask(fw, a, ti, sum, extra, now)
}

// launchGroup launches all tasks of a group or none.
func (m *Master) launchGroup(fw *framework, a *agent, pool *acceptPool, lg *mesos.Offer_Operation_LaunchGroup, now time.Time) {
	if lg == nil {
		return
	}
	var total resSum
	var totalExtra mesos.Resources
	sums := make([]resSum, len(lg.TaskGroup.Tasks))
	extras := make([]mesos.Resources, len(lg.TaskGroup.Tasks))
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
		sums[i], extras[i], msg = m.validateTask(fw, a, ti, true)
		total = total.add(sums[i])
		totalExtra = append(totalExtra, extras[i]...)
	}
	if msg == "" {
		if es, ee, err := splitResources(lg.Executor.Resources, fw); err != nil {
			msg = "Executor uses invalid resources: " + err.Error()
		} else {
			total = total.add(es)
			totalExtra = append(totalExtra, ee...)
		}
	}
	if msg == "" && !pool.take(total, totalExtra) {
		msg = "Task group uses more resources than available in the offers"
	}
	if msg != "" {
		reason := mesos.REASON_TASK_GROUP_INVALID
		for i := range lg.TaskGroup.Tasks {
			m.masterUpdate(fw, lg.TaskGroup.Tasks[i].TaskID.Value, a.spec.ID, mesos.TASK_ERROR, &reason, msg)
		}
		return
	}
	for i := range lg.TaskGroup.Tasks {
		m.startTask(fw, a, &lg.TaskGroup.Tasks[i], sums[i], extras[i], now)
	}
}

// validateTask returns why the master would refuse a task, or "", with
// what it uses: unreserved scalars summed, and its other resources.
func (m *Master) validateTask(fw *framework, a *agent, ti *mesos.TaskInfo, group bool) (resSum, mesos.Resources, string) {
	switch {
	case ti.TaskID.Value == "":
		return resSum{}, nil, "Task ID must not be empty"
	case fw.tasks[ti.TaskID.Value] != nil:
		return resSum{}, nil, "Task has duplicate ID: " + ti.TaskID.Value
	case ti.AgentID.Value != a.spec.ID:
		return resSum{}, nil, "Task uses agent ID " + ti.AgentID.Value + " which differs from the offers' agent " + a.spec.ID
	case !group && (ti.Command == nil) == (ti.Executor == nil):
		return resSum{}, nil, "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"
	case group && ti.Command == nil:
		return resSum{}, nil, "Task in a group must have CommandInfo"
	case len(ti.Resources) == 0:
		return resSum{}, nil, "Task uses no resources"
	}
	if msg := validateWorkload(ti); msg != "" {
		return resSum{}, nil, msg
	}
	sum, extra, err := splitResources(ti.Resources, fw)
	if err != nil {
		return resSum{}, nil, "Task uses invalid resources: " + err.Error()
	}
	return sum, extra, ""
}

// describe renders resources for a message.
func describe(rs []mesos.Resource) string {
	return mesos.Resources(rs).String()
}
