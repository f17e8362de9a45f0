package k8s

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// maxDeletesPerCheck bounds the finished pods deleted in one check, so the
// loop keeps reporting while many pods age out together.
const maxDeletesPerCheck = 200

// unwrapDeleted returns the object of a delete event, tombstone or not.
func unwrapDeleted(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// nodeChanged marks the node's host for reporting and tracks how long it
// has not been Ready.
func (p *Plugin) nodeChanged(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	now := p.clock.Now()
	p.mu.Lock()
	p.dirtyNodes[n.Name] = true
	if nodeReady(n) {
		delete(p.notReadySince, n.Name)
		delete(p.lostNodes, n.Name)
	} else if _, seen := p.notReadySince[n.Name]; !seen {
		p.notReadySince[n.Name] = now
		p.log.Info("node not ready", "node", n.Name)
	}
	p.mu.Unlock()
	p.wake()
}

// nodeDeleted removes the node's host and gives up its runs.
func (p *Plugin) nodeDeleted(obj any) {
	n, ok := unwrapDeleted(obj).(*corev1.Node)
	if !ok {
		return
	}
	p.log.Info("node deleted", "node", n.Name)
	p.mu.Lock()
	p.removedNodes = append(p.removedNodes, n.Name)
	delete(p.dirtyNodes, n.Name)
	delete(p.notReadySince, n.Name)
	delete(p.lostNodes, n.Name)
	p.mu.Unlock()
	p.giveUpRunsOn(context.Background(), n.Name, ReasonNodeDeleted, "node "+n.Name+" was deleted")
}

// giveUpNotReadyNodes reports the runs of nodes not Ready past the grace
// period LOST, once per outage.
func (p *Plugin) giveUpNotReadyNodes(ctx context.Context, now time.Time) {
	var expired []string
	p.mu.Lock()
	for name, since := range p.notReadySince {
		if !p.lostNodes[name] && now.Sub(since) >= p.cfg.NodeGrace {
			p.lostNodes[name] = true
			expired = append(expired, name)
		}
	}
	p.mu.Unlock()
	for _, name := range expired {
		p.log.Info("node not ready past grace", "node", name, "grace", p.cfg.NodeGrace)
		p.giveUpRunsOn(ctx, name, ReasonNodeNotReady, fmt.Sprintf("node %s not Ready for %v", name, p.cfg.NodeGrace))
	}
}

// giveUpRunsOn reports the unfinished runs on a node LOST and deletes their
// pods at once, so none runs on beside its replacement if the node returns.
func (p *Plugin) giveUpRunsOn(ctx context.Context, node, reason, msg string) {
	objs, _ := p.pods.ByIndex(indexByNode, node)
	now := p.clock.Now()
	var doomed []*corev1.Pod
	p.mu.Lock()
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !isOurs(pod, p.cfg.Namespace) || podEnded(pod) {
			continue
		}
		run := model.RunID(pod.Annotations[AnnotationRunID])
		t := p.trackLocked(run, pod)
		if t.last.State.IsTerminal() {
			continue
		}
		p.reportLocked(run, t, runStatus{State: model.TaskLost, Reason: reason, Message: msg, Time: now}, now)
		doomed = append(doomed, pod)
	}
	// Runs launched on the node whose pods the informer has not shown yet
	// are lost too; their pods are deleted by name.
	host := hostID(p.cfg.Cluster, node)
	for run, t := range p.runs {
		if t.host != host || t.last.State.IsTerminal() {
			continue
		}
		p.reportLocked(run, t, runStatus{State: model.TaskLost, Reason: reason, Message: msg, Time: now}, now)
		doomed = append(doomed, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.cfg.Namespace, Name: podName(run)}})
	}
	p.mu.Unlock()
	p.wake()
	if len(doomed) == 0 {
		return
	}
	go func() {
		zero := int64(0)
		for _, pod := range doomed {
			err := p.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			if err != nil && !apierrors.IsNotFound(err) {
				p.log.Warn("deleting pod of lost run", "pod", pod.Name, "err", err)
			}
		}
	}()
}

// podChanged reports a Peloton pod's status when it changed, and marks the
// node of any other pod for reporting, since its requests count there.
func (p *Plugin) podChanged(old, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if !isOurs(pod, p.cfg.Namespace) {
		p.mu.Lock()
		if pod.Spec.NodeName != "" {
			p.dirtyNodes[pod.Spec.NodeName] = true
		}
		if oldPod, ok := old.(*corev1.Pod); ok && oldPod.Spec.NodeName != "" {
			p.dirtyNodes[oldPod.Spec.NodeName] = true
		}
		p.mu.Unlock()
		p.wake()
		return
	}
	now := p.clock.Now()
	st, ok := podRunStatus(pod, now)
	if !ok {
		return
	}
	run := model.RunID(pod.Annotations[AnnotationRunID])
	p.mu.Lock()
	t := p.trackLocked(run, pod)
	if !t.last.State.IsTerminal() && st.changedFrom(t.last) {
		if st.State == t.last.State {
			st.Time = now // only the probes changed
		}
		p.reportLocked(run, t, st, now)
	}
	p.mu.Unlock()
	p.wake()
}

// podDeleted ends the run of a Peloton pod that went away before it ended:
// KILLED when the plugin was asked to kill it, LOST otherwise.
func (p *Plugin) podDeleted(obj any) {
	pod, ok := unwrapDeleted(obj).(*corev1.Pod)
	if !ok {
		return
	}
	if !isOurs(pod, p.cfg.Namespace) {
		if pod.Spec.NodeName != "" {
			p.mu.Lock()
			p.dirtyNodes[pod.Spec.NodeName] = true
			p.mu.Unlock()
			p.wake()
		}
		return
	}
	run := model.RunID(pod.Annotations[AnnotationRunID])
	now := p.clock.Now()
	p.mu.Lock()
	t := p.trackLocked(run, pod)
	if !t.last.State.IsTerminal() {
		st := runStatus{State: model.TaskLost, Reason: ReasonPodDeleted, Message: "pod " + pod.Name + " was deleted", Time: now}
		if final, ok := podRunStatus(pod, now); ok && final.State.IsTerminal() {
			st = final
		}
		p.reportLocked(run, t, st, now)
	}
	p.dropGangOfLocked(pod)
	delete(p.runs, run)
	delete(p.undecided, run)
	p.mu.Unlock()
	p.wake()
}

// trackLocked returns the tracked run of a pod, tracking it if needed.
func (p *Plugin) trackLocked(run model.RunID, pod *corev1.Pod) *trackedRun {
	t := p.runs[run]
	if t == nil {
		t = &trackedRun{host: model.HostID(pod.Annotations[AnnotationHostID])}
		if t.host == "" {
			t.host = hostID(p.cfg.Cluster, pod.Spec.NodeName)
		}
		p.runs[run] = t
	}
	return t
}

// reportLocked queues a status; a run being killed ends KILLED unless it
// finished on its own first.
func (p *Plugin) reportLocked(run model.RunID, t *trackedRun, st runStatus, now time.Time) {
	if t.killing && st.State.IsTerminal() && st.State != model.TaskSucceeded {
		st.State, st.Reason = model.TaskKilled, model.ReasonKilled
	}
	if st.Time.IsZero() {
		st.Time = now
	}
	t.last = hostmgr.TaskStatus{Run: run, Host: t.host, State: st.State, Reason: st.Reason, Message: st.Message,
		ExitCode: st.ExitCode, Time: st.Time, Health: st.Health, Ready: st.Ready}
	if st.State.IsTerminal() && t.endedAt.IsZero() {
		t.endedAt = now
	}
	if st.State == model.TaskRunning && (st.Health == model.HealthUnknown || st.Ready == model.HealthUnknown) {
		p.undecided[run] = true
	} else {
		delete(p.undecided, run)
	}
	p.log.Info("run state", "run", run, "state", st.State, "reason", st.Reason, "message", st.Message,
		"health", st.Health, "ready", st.Ready)
	p.queued = append(p.queued, t.last)
}

// deleteFinishedPods deletes pods whose end was reported FinishedPodTTL ago.
func (p *Plugin) deleteFinishedPods(ctx context.Context, now time.Time) {
	var names []string
	p.mu.Lock()
	for run, t := range p.runs {
		if len(names) == maxDeletesPerCheck {
			break
		}
		if !t.endedAt.IsZero() && now.Sub(t.endedAt) >= p.cfg.FinishedPodTTL {
			if p.podOf(run) == nil {
				delete(p.runs, run) // no pod left: nothing to keep
				continue
			}
			names = append(names, podName(run))
			t.endedAt = now // retried after another TTL if the delete fails
		}
	}
	p.mu.Unlock()
	for _, name := range names {
		err := p.cfg.Client.CoreV1().Pods(p.cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			p.log.Warn("deleting finished pod", "pod", name, "err", err)
		}
	}
}

// recheckHealth reports runs whose probes had no verdict yet and have one
// now: the verdict comes with time, not only with pod changes.
func (p *Plugin) recheckHealth(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for run := range p.undecided {
		t, pod := p.runs[run], p.podOf(run)
		if t == nil || pod == nil {
			delete(p.undecided, run)
			continue
		}
		if st, ok := podRunStatus(pod, now); ok && st.changedFrom(t.last) {
			st.Time = now
			p.reportLocked(run, t, st, now)
		}
	}
}
