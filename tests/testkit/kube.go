package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/internal/testenv"
)

// Kube returns the kubeconfig of a Kubernetes test control plane (etcd,
// kube-apiserver and kwok on loopback) started by deploy/k8s/cluster.sh
// for t and stopped when t ends, or the one started with `cluster.sh start
// DIR` named by $PELOTON_K8S_CLUSTER (kept). Without the binaries
// (`cluster.sh build`) t is skipped, or fails when CI=true: CI builds them
// first (.ci/run).
func Kube(t testing.TB) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "deploy", "k8s", "cluster.sh")
	unavailable := func(why string) {
		t.Helper()
		testenv.Missing(t, "the Kubernetes test control plane", why+"; build it with deploy/k8s/cluster.sh build")
	}
	if dir := os.Getenv("PELOTON_K8S_CLUSTER"); dir != "" {
		kubeconfig := filepath.Join(dir, "kubeconfig")
		if _, err := os.Stat(kubeconfig); err != nil {
			unavailable(fmt.Sprintf("PELOTON_K8S_CLUSTER=%s holds no started cluster: %v", dir, err))
		}
		return kubeconfig
	}
	out, err := exec.Command("bash", script, "bin-dir").Output()
	if err != nil {
		unavailable("cluster.sh bin-dir: " + err.Error())
	}
	bin := strings.TrimSpace(string(out))
	for _, name := range []string{"etcd", "kube-apiserver", "kwok"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			unavailable(fmt.Sprintf("%s is not built in %s", name, bin))
		}
	}
	dir := t.TempDir()
	start := exec.Command("bash", script, "start", dir)
	var log bytes.Buffer
	start.Stdout, start.Stderr = &log, &log
	t.Cleanup(func() { _ = exec.Command("bash", script, "stop", dir).Run() })
	if err := start.Run(); err != nil {
		t.Fatalf("cluster.sh start: %v\n%s", err, log.String())
	}
	return filepath.Join(dir, "kubeconfig")
}
