// Package k8s is the host manager plugin that runs tasks as pods on a
// Kubernetes cluster, with Peloton as the scheduler and Kubernetes as the
// executor.
//
// Shared informers follow the cluster's Nodes and Pods. Every node is a
// host "<cluster>/<node name>" of kind "kubernetes": its capacity is the
// node's allocatable resources less what pods not started by Peloton
// request there; its labels are the node's labels plus its taints
// ("taint.<key>" = "<value>:<effect>"); it is UP when Ready, DRAINING when
// cordoned or tainted NoSchedule/NoExecute, DOWN when not Ready.
//
// Launch creates one pod per run, already bound to the chosen node through
// spec.nodeName and carrying the plugin's scheduler name, so no Kubernetes
// scheduler touches it. The pod holds the task's command, arguments,
// environment and resource requests, the run's labels and the run id as an
// annotation. Creates run in parallel behind the client's QPS/burst limit.
// Pod phases and container states become task statuses (RUNNING, SUCCEEDED,
// FAILED with exit code, OOM kills and image pull errors); a pod deleted
// by someone else, a node deleted, or a node not Ready past a grace period
// makes its runs LOST. Kill deletes the pod with the task's grace period.
// Reconcile, after a shard restart, finds pods by their run id and reports
// what they do, LOST when there is none. Finished pods are deleted some
// time after their end was reported.
//
// The pure conversions (node → host, pod → status, launch → pod) live in
// convert.go and take no clock and do no I/O. The package imports
// shard/hostmgr, shard/model, shard/clock and client-go; never another
// plugin, the job or resource manager, or the store.
package k8s
