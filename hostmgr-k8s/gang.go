package k8s

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// A run of a gang finds its members in a ConfigMap named like its pod,
// mounted at hostmgr.GangFilePath. The config map lives as long as the
// pod: it is deleted when the pod goes, and config maps of gangs whose pod
// is gone are swept when the plugin starts.

// gangConfigMap builds the config map holding a run's gang members.
func gangConfigMap(namespace string, run model.RunID, members []hostmgr.GangMember) (*corev1.ConfigMap, error) {
	data, err := json.Marshal(members)
	if err != nil {
		return nil, fmt.Errorf("gang members: %w", err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        podName(run),
			Namespace:   namespace,
			Labels:      map[string]string{LabelManagedBy: ManagedByValue, LabelGang: "true"},
			Annotations: map[string]string{AnnotationRunID: string(run)},
		},
		Data: map[string]string{gangConfigKey: string(data)},
	}, nil
}

// ensureGang creates the config map of a run's gang.
func (p *Plugin) ensureGang(ctx context.Context, run model.RunID, members []hostmgr.GangMember) error {
	cm, err := gangConfigMap(p.cfg.Namespace, run, members)
	if err != nil {
		return err
	}
	_, err = p.cfg.Client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("gang config map %s: %w", cm.Name, err)
	}
	return nil
}

// dropGangOfLocked queues the deletion of a pod's gang config map.
func (p *Plugin) dropGangOfLocked(pod *corev1.Pod) {
	if name := pod.Annotations[AnnotationGangConfig]; name != "" {
		p.doomedGangs = append(p.doomedGangs, name)
	}
}

// deleteGangs deletes the queued gang config maps.
func (p *Plugin) deleteGangs(ctx context.Context) {
	p.mu.Lock()
	names := p.doomedGangs
	p.doomedGangs = nil
	p.mu.Unlock()
	for _, name := range names {
		p.deleteGang(ctx, name)
	}
}

func (p *Plugin) deleteGang(ctx context.Context, name string) {
	err := p.cfg.Client.CoreV1().ConfigMaps(p.cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		p.log.Warn("deleting gang config map", "configmap", name, "err", err)
	}
}

// sweepGangs deletes the gang config maps whose pod is gone, left behind
// while no plugin ran.
func (p *Plugin) sweepGangs(ctx context.Context) {
	list, err := p.cfg.Client.CoreV1().ConfigMaps(p.cfg.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: LabelManagedBy + "=" + ManagedByValue + "," + LabelGang + "=true"})
	if err != nil {
		p.log.Warn("listing gang config maps", "err", err)
		return
	}
	for _, cm := range list.Items {
		if p.podOf(model.RunID(cm.Annotations[AnnotationRunID])) == nil {
			p.deleteGang(ctx, cm.Name)
		}
	}
}
