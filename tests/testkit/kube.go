package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/internal/testenv"
)

// KubeCluster is a Kubernetes test control plane: etcd, kube-apiserver
// and kwok on loopback, started by deploy/k8s/cluster.sh.
type KubeCluster struct {
	Dir        string
	Kubeconfig string
	// kept: named by $PELOTON_K8S_CLUSTER, not stopped here.
	kept bool
}

// ErrKubeMissing is returned when the control plane's binaries are not
// built (`deploy/k8s/cluster.sh build`).
var ErrKubeMissing = errors.New("the Kubernetes test control plane is not built")

// StartKubeCluster starts a control plane in dir, or uses the one in the
// directory $PELOTON_K8S_CLUSTER names, started there first if it is
// not (`cluster.sh start DIR`) and kept between runs.
func StartKubeCluster(dir string) (*KubeCluster, error) {
	script := RepoPath("deploy", "k8s", "cluster.sh")
	c := &KubeCluster{Dir: dir}
	if kept := os.Getenv("PELOTON_K8S_CLUSTER"); kept != "" {
		c.Dir, c.kept = kept, true
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	out, err := exec.Command("bash", script, "bin-dir").Output()
	if err != nil {
		return nil, fmt.Errorf("%w: cluster.sh bin-dir: %v", ErrKubeMissing, err)
	}
	bin := strings.TrimSpace(string(out))
	for _, name := range []string{"etcd", "kube-apiserver", "kwok"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("%w: %s is not built in %s", ErrKubeMissing, name, bin)
		}
	}
	if _, err := os.Stat(c.Kubeconfig); err == nil && c.kept {
		return c, nil
	}
	start := exec.Command("bash", script, "start", c.Dir)
	var log bytes.Buffer
	start.Stdout, start.Stderr = &log, &log
	if err := start.Run(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("cluster.sh start: %v\n%s", err, log.String())
	}
	return c, nil
}

// Stop stops the control plane unless it is kept.
func (c *KubeCluster) Stop() {
	if !c.kept {
		_ = exec.Command("bash", RepoPath("deploy", "k8s", "cluster.sh"), "stop", c.Dir).Run()
	}
}

// Kube returns the kubeconfig of a control plane started for t and
// stopped when t ends, or the kept one of $PELOTON_K8S_CLUSTER. Without
// the binaries t is skipped, or fails when CI=true: CI builds them first
// (.ci/run).
func Kube(t testing.TB) string {
	t.Helper()
	c, err := StartKubeCluster(t.TempDir())
	if errors.Is(err, ErrKubeMissing) {
		testenv.Missing(t, "the Kubernetes test control plane", err.Error()+"; build it with deploy/k8s/cluster.sh build")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c.Kubeconfig
}
