package k8stest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// resources maps the kinds of deploy/kubernetes to their API resources.
var resources = map[string]schema.GroupVersionResource{
	"Namespace":                {Version: "v1", Resource: "namespaces"},
	"ServiceAccount":           {Version: "v1", Resource: "serviceaccounts"},
	"ConfigMap":                {Version: "v1", Resource: "configmaps"},
	"Service":                  {Version: "v1", Resource: "services"},
	"ClusterRole":              {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding":       {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":                     {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":              {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"StatefulSet":              {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"ServiceMonitor":           {Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
	"CustomResourceDefinition": {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
}

func readManifests(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj == nil {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out
}

// apply applies obj with server-side apply, for real or as a dry run.
func apply(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, dryRun bool) error {
	gvr, ok := resources[obj.GetKind()]
	if !ok {
		return errors.New("no resource known for kind " + obj.GetKind())
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: "peloton-deploy-test", Force: new(bool)}
	*opts.Force = true
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if ns := obj.GetNamespace(); ns != "" {
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// The manifests of deploy/kubernetes pass server-side dry run, and the
// service account they create may do exactly what the Kubernetes host
// manager and the Kubernetes lease do, checked by SubjectAccessReview.
func TestDeployManifests(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	dir := testkit.RepoPath("deploy", "kubernetes")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) < 5 {
		t.Fatalf("deploy/kubernetes: %v", files)
	}
	objs := readManifests(t, files...)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for _, k := range []string{"StatefulSet", "Service", "ConfigMap", "ServiceAccount", "ClusterRole", "Role", "ServiceMonitor"} {
		if kinds[k] == 0 {
			t.Errorf("deploy/kubernetes has no %s", k)
		}
	}

	// The ServiceMonitor's kind comes from the Prometheus Operator: a CRD
	// with its group and kind stands in for it.
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "servicemonitors.monitoring.coreos.com"},
		"spec": map[string]any{
			"group": "monitoring.coreos.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "servicemonitors", "singular": "servicemonitor", "kind": "ServiceMonitor"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if err := apply(ctx, dyn, crd, false); err != nil {
		t.Fatalf("ServiceMonitor CRD: %v", err)
	}
	// Namespaces first, for real: a dry run creates nothing to put objects in.
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			if err := apply(ctx, dyn, o, false); err != nil {
				t.Fatalf("namespace %s: %v", o.GetName(), err)
			}
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, o := range objs {
		for {
			err := apply(ctx, dyn, o, true)
			if err == nil {
				break
			}
			// The CRD's resource is served a moment after it is created.
			if o.GetKind() == "ServiceMonitor" && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			t.Fatalf("server-side dry run of %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	t.Logf("server-side dry run passed for %d objects: %v", len(objs), kinds)

	// RBAC, for real, then asked about each verb.
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := apply(ctx, dyn, o, false); err != nil {
				t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	type access struct {
		verb, group, resource, namespace, name string
	}
	allowed := []access{
		// The host manager's informers: every node and pod.
		{"list", "", "nodes", "", ""}, {"watch", "", "nodes", "", ""}, {"get", "", "nodes", "", ""},
		{"list", "", "pods", "", ""}, {"watch", "", "pods", "", ""},
		// Launch, kill, look up its pods in the tasks' namespace.
		{"create", "", "pods", "peloton-tasks", ""}, {"delete", "", "pods", "peloton-tasks", "x"}, {"get", "", "pods", "peloton-tasks", "x"},
		// Gangs' config maps.
		{"create", "", "configmaps", "peloton-tasks", ""}, {"list", "", "configmaps", "peloton-tasks", ""}, {"delete", "", "configmaps", "peloton-tasks", "x"},
		// Stateful instances' volumes.
		{"create", "", "persistentvolumes", "", ""}, {"get", "", "persistentvolumes", "", "x"}, {"delete", "", "persistentvolumes", "", "x"},
		{"create", "", "persistentvolumeclaims", "peloton-tasks", ""}, {"get", "", "persistentvolumeclaims", "peloton-tasks", "x"}, {"delete", "", "persistentvolumeclaims", "peloton-tasks", "x"},
		// The region's leader lease.
		{"create", "coordination.k8s.io", "leases", "peloton", ""},
		{"get", "coordination.k8s.io", "leases", "peloton", "peloton-east"}, {"update", "coordination.k8s.io", "leases", "peloton", "peloton-east"},
	}
	denied := []access{
		{"get", "", "secrets", "peloton", "x"}, {"list", "", "secrets", "", ""},
		{"create", "", "pods", "default", ""}, {"delete", "", "pods", "default", "x"},
		{"delete", "", "nodes", "", "x"}, {"update", "", "nodes", "", "x"}, {"patch", "", "pods", "peloton-tasks", "x"},
		{"update", "coordination.k8s.io", "leases", "peloton", "other"}, {"create", "coordination.k8s.io", "leases", "kube-system", ""},
		{"create", "", "configmaps", "peloton", ""}, {"create", "rbac.authorization.k8s.io", "roles", "peloton", ""},
	}
	ask := func(a access) bool {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:peloton:peloton",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:peloton", "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource,
				Namespace: a.namespace, Name: a.name},
		}}
		got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview %+v: %v", a, err)
		}
		return got.Status.Allowed
	}
	for _, a := range allowed {
		if !ask(a) {
			t.Errorf("service account peloton may not %s %s %s (namespace %q, name %q): the host manager needs it", a.verb, a.group, a.resource, a.namespace, a.name)
		}
	}
	for _, a := range denied {
		if ask(a) {
			t.Errorf("service account peloton may %s %s %s (namespace %q, name %q): more than it needs", a.verb, a.group, a.resource, a.namespace, a.name)
		}
	}
	t.Logf("RBAC: %d accesses allowed, %d denied, as the host manager and lease need", len(allowed), len(denied))
}
