package k8s

import (
	"context"
	"errors"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// A stateful instance's volume is a local PersistentVolume on its node,
// bound in advance to a PersistentVolumeClaim of the plugin's namespace:
// the volume's claimRef names the claim and the claim's volumeName names
// the volume, so no provisioner is needed and the binding cannot go to
// another claim. Both are made at the first launch and found again by
// name at later ones.

// ErrVolumeElsewhere is returned when a volume already exists on another
// node than the one its instance is launched on.
var ErrVolumeElsewhere = errors.New("kubernetes host manager: volume is on another node")

// nodeNameField is the node field a volume's node affinity matches.
const nodeNameField = "metadata.name"

// claimName is the name of the claim of a volume id in the namespace.
func claimName(id string) string { return dnsLabel(id) }

// volumeName is the cluster-wide name of the volume of a volume id in a
// namespace.
func volumeName(namespace, id string) string { return dnsLabel(namespace + "-" + id) }

// volumeObjects builds the persistent volume and claim of a volume on a
// node.
func volumeObjects(cfg podSpecConfig, node string, vm hostmgr.VolumeMount) (*corev1.PersistentVolume, *corev1.PersistentVolumeClaim, error) {
	if vm.ID == "" {
		return nil, nil, fmt.Errorf("volume %q has no id", vm.Volume.Name)
	}
	if vm.Volume.SizeMB <= 0 {
		return nil, nil, fmt.Errorf("volume %s: size %d MB must be positive", vm.ID, vm.Volume.SizeMB)
	}
	claim, pvName := claimName(vm.ID), volumeName(cfg.Namespace, vm.ID)
	size := corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(vm.Volume.SizeMB*mib, resource.BinarySI)}
	meta := metav1.ObjectMeta{
		Labels:      map[string]string{LabelManagedBy: ManagedByValue},
		Annotations: map[string]string{AnnotationVolumeID: vm.ID},
	}
	filesystem := corev1.PersistentVolumeFilesystem
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv := &corev1.PersistentVolume{
		ObjectMeta: *meta.DeepCopy(),
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    size,
			AccessModes: rwo,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: path.Join(cfg.VolumeBasePath, cfg.Namespace, claim)}},
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: cfg.Namespace, Name: claim},
			// Kept when the claim goes: RemoveVolumes deletes both.
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              cfg.StorageClass,
			VolumeMode:                    &filesystem,
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
					Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		},
	}
	pv.Name = pvName
	class := cfg.StorageClass
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: *meta.DeepCopy(),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      rwo,
			Resources:        corev1.VolumeResourceRequirements{Requests: size},
			VolumeName:       pvName,
			StorageClassName: &class,
			VolumeMode:       &filesystem,
		},
	}
	pvc.Name, pvc.Namespace = claim, cfg.Namespace
	return pv, pvc, nil
}

// volumeNode is the node a volume made by volumeObjects is on.
func volumeNode(pv *corev1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, r := range term.MatchFields {
			if r.Key == nodeNameField && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0]
			}
		}
	}
	return ""
}

// ensureVolumes creates the volumes and claims of a launch on its node,
// or finds them from an earlier run there.
func (p *Plugin) ensureVolumes(ctx context.Context, node string, vols []hostmgr.VolumeMount) error {
	core := p.cfg.Client.CoreV1()
	for _, vm := range vols {
		pv, pvc, err := volumeObjects(p.podCfg, node, vm)
		if err != nil {
			return err
		}
		created, err := core.PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = core.PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("persistent volume %s: %w", pv.Name, err)
		}
		if on := volumeNode(created); on != node {
			return fmt.Errorf("%w: volume %s of %s is on node %q, not %s", ErrVolumeElsewhere, pv.Name, vm.ID, on, node)
		}
		if created.DeletionTimestamp != nil {
			return fmt.Errorf("persistent volume %s of %s is being deleted", pv.Name, vm.ID)
		}
		got, err := core.PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = core.PersistentVolumeClaims(pvc.Namespace).Get(ctx, pvc.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("persistent volume claim %s: %w", pvc.Name, err)
		}
		if got.DeletionTimestamp != nil || got.Spec.VolumeName != pv.Name {
			return fmt.Errorf("persistent volume claim %s of %s is being deleted or bound to %q", pvc.Name, vm.ID, got.Spec.VolumeName)
		}
	}
	return nil
}

var _ hostmgr.VolumeRemover = (*Plugin)(nil)

// RemoveVolumes deletes the claims and volumes of these volume ids. The
// data stays in the node's directory: a local volume has no deleter.
func (p *Plugin) RemoveVolumes(ctx context.Context, host model.HostID, ids []string) error {
	if cluster, _, ok := nodeOf(host); !ok || cluster != p.cfg.Cluster {
		return fmt.Errorf("host %q is not in cluster %s", host, p.cfg.Cluster)
	}
	core := p.cfg.Client.CoreV1()
	var errs []error
	for _, id := range ids {
		err := core.PersistentVolumeClaims(p.cfg.Namespace).Delete(ctx, claimName(id), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting claim of %s: %w", id, err))
		}
		err = core.PersistentVolumes().Delete(ctx, volumeName(p.cfg.Namespace, id), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting volume of %s: %w", id, err))
		}
	}
	if len(errs) == 0 {
		p.log.Info("volumes removed", "host", host, "volumes", ids)
	}
	return errors.Join(errs...)
}
