package k8s

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Launch creates a pod per run, bound to the run's node, with at most
// LaunchParallelism creates in flight. Runs that cannot start are reported:
// LOST when their node is unknown or the API server failed, FAILED when the
// pod is refused as invalid. A run whose pod exists already is left to it.
func (p *Plugin) Launch(ctx context.Context, runs []hostmgr.Launch) error {
	if err := p.waitSynced(ctx); err != nil {
		return err
	}
	work := make(chan hostmgr.Launch)
	var wg sync.WaitGroup
	workers := min(p.cfg.LaunchParallelism, len(runs))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				p.launchOne(ctx, l)
			}
		}()
	}
	var err error
feed:
	for _, l := range runs {
		select {
		case work <- l:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	p.wake()
	return err
}

func (p *Plugin) launchOne(ctx context.Context, l hostmgr.Launch) {
	cluster, node, ok := nodeOf(l.Host)
	if !ok || cluster != p.cfg.Cluster {
		p.reportRun(l.Run, l.Host, runStatus{State: model.TaskLost, Reason: model.ReasonHostLost,
			Message: fmt.Sprintf("host %q is not in cluster %s", l.Host, p.cfg.Cluster)})
		return
	}
	if _, err := p.nodes.Get(node); err != nil {
		p.reportRun(l.Run, l.Host, runStatus{State: model.TaskLost, Reason: model.ReasonHostLost,
			Message: "node " + node + " is not in the cluster"})
		return
	}
	pod, err := launchPod(p.podCfg, node, l)
	if err != nil {
		p.reportRun(l.Run, l.Host, runStatus{State: model.TaskFailed, Reason: model.ReasonLaunchError, ExitCode: -1, Message: err.Error()})
		return
	}
	p.mu.Lock()
	if _, known := p.runs[l.Run]; !known {
		p.runs[l.Run] = &trackedRun{host: l.Host}
	}
	p.mu.Unlock()
	if err := p.ensureVolumes(ctx, node, l.Volumes); err != nil {
		st := runStatus{State: model.TaskLost, Reason: ReasonCreateRefused, Message: err.Error()}
		if errors.Is(err, ErrVolumeElsewhere) {
			st = runStatus{State: model.TaskFailed, Reason: model.ReasonLaunchError, ExitCode: -1, Message: err.Error()}
		}
		p.reportRun(l.Run, l.Host, st)
		return
	}
	if l.Gang != nil {
		if err := p.ensureGang(ctx, l.Run, l.Gang); err != nil {
			p.reportRun(l.Run, l.Host, runStatus{State: model.TaskLost, Reason: ReasonCreateRefused, Message: err.Error()})
			return
		}
	}
	_, err = p.cfg.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		// The informer reports what the pod does.
		return
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		p.reportRun(l.Run, l.Host, runStatus{State: model.TaskFailed, Reason: ReasonCreateRefused, ExitCode: -1, Message: err.Error()})
	default:
		p.reportRun(l.Run, l.Host, runStatus{State: model.TaskLost, Reason: ReasonCreateRefused, Message: "creating pod: " + err.Error()})
	}
	if l.Gang != nil {
		p.deleteGang(ctx, pod.Name)
	}
}

// reportRun queues a status for a run, tracking it if needed.
func (p *Plugin) reportRun(run model.RunID, host model.HostID, st runStatus) {
	now := p.clock.Now()
	p.mu.Lock()
	t := p.runs[run]
	if t == nil {
		t = &trackedRun{host: host}
		p.runs[run] = t
	}
	p.reportLocked(run, t, st, now)
	p.mu.Unlock()
	p.wake()
}

// Kill deletes a run's pod with the grace period; the KILLED status follows
// when the pod is gone. An ended run reports its end again; a run without a
// pod is reported LOST. Neither is an error.
func (p *Plugin) Kill(ctx context.Context, run model.RunID, host model.HostID, grace time.Duration) error {
	if err := p.waitSynced(ctx); err != nil {
		return err
	}
	pod := p.podOf(run)
	p.mu.Lock()
	t := p.runs[run]
	if t != nil && t.last.State.IsTerminal() {
		p.queued = append(p.queued, t.last)
		p.mu.Unlock()
		p.wake()
		return nil
	}
	if t != nil {
		t.killing = true
	}
	p.mu.Unlock()
	name, ns := podName(run), p.cfg.Namespace
	if pod != nil {
		name, ns = pod.Name, pod.Namespace
	}
	secs := int64(grace.Round(time.Second) / time.Second)
	err := p.cfg.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &secs})
	switch {
	case apierrors.IsNotFound(err):
		p.reportRun(run, host, runStatus{State: model.TaskLost, Reason: model.ReasonUnknownTask, Message: "no pod for this run"})
		return nil
	case err != nil:
		return fmt.Errorf("deleting pod %s of %s: %w", name, run, err)
	}
	p.log.Info("killing run", "run", run, "pod", name, "grace", grace)
	if t == nil {
		// Not seen yet: remember the kill so the pod's end reads KILLED.
		p.mu.Lock()
		if t = p.runs[run]; t == nil {
			t = &trackedRun{host: host}
			p.runs[run] = t
		}
		t.killing = true
		p.mu.Unlock()
	}
	return nil
}

// Reconcile reports the state of each run from its pod: what the pod says
// when it started or ended, the last reported end when the pod is already
// gone, LOST when the cluster never had it. Pods still starting report
// when they run.
func (p *Plugin) Reconcile(ctx context.Context, runs []hostmgr.RunRef) error {
	if err := p.waitSynced(ctx); err != nil {
		return err
	}
	now := p.clock.Now()
	p.mu.Lock()
	for _, ref := range runs {
		pod := p.podOf(ref.Run)
		t := p.runs[ref.Run]
		switch {
		case pod != nil:
			t = p.trackLocked(ref.Run, pod)
			if st, ok := podRunStatus(pod, now); ok && !t.last.State.IsTerminal() {
				p.reportLocked(ref.Run, t, st, now)
			} else if t.last.State != 0 {
				p.queued = append(p.queued, t.last)
			}
		case t != nil && t.last.State.IsTerminal():
			p.queued = append(p.queued, t.last)
		case t != nil:
			// Launched by this instance, not yet seen by the informer.
		default:
			t = &trackedRun{host: ref.Host}
			p.runs[ref.Run] = t
			p.reportLocked(ref.Run, t, runStatus{State: model.TaskLost, Reason: model.ReasonUnknownTask,
				Message: "no pod for this run in namespace " + p.cfg.Namespace}, now)
		}
	}
	p.mu.Unlock()
	p.wake()
	return nil
}

// podOf finds the pod of a run in the informer's cache.
func (p *Plugin) podOf(run model.RunID) *corev1.Pod {
	objs, _ := p.pods.ByIndex(indexByRun, string(run))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			return pod
		}
	}
	return nil
}
