// Package k8stest drives the real peloton binary against a real Kubernetes
// control plane on loopback: etcd, kube-apiserver and kwok (fake nodes and
// kubelets), started by deploy/k8s/cluster.sh from binaries it built and
// cached. Its tests check the k8s host manager end to end (jobs on nodes,
// exit codes, nodes going away, shard restarts, `peloton host list`);
// BenchmarkSchedulers compares Peloton with kube-scheduler on the same API
// server and is not run in CI.
//
// When the binaries are not built the tests fail with a clear message if
// CI=true, and are skipped otherwise. The package imports only client-go
// and the standard library; it drives Peloton through its binary and HTTP.
package k8stest
