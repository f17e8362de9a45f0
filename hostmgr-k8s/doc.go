// Package k8s is the host manager plugin that runs tasks as pods on a
// Kubernetes cluster, with Peloton as the scheduler and Kubernetes as the
// executor.
//
// Shared informers follow the cluster's Nodes and Pods. Every node is a
// host "<cluster>/<node name>" of kind "kubernetes" that runs images
// (RunsImages) and offers the plugin's port ranges (Config.Ports, by
// default model.DefaultPorts): its capacity is the node's allocatable
// resources less what pods not started by Peloton request there; its labels
// are the node's labels plus its taints ("taint.<key>" = "<value>:<effect>");
// it is UP when Ready, DRAINING when cordoned or tainted
// NoSchedule/NoExecute, DOWN when not Ready. A node added to the cluster is
// reported as soon as the node informer sees it.
//
// Launch creates one pod per run, already bound to the chosen node through
// spec.nodeName and carrying the plugin's scheduler name, so no Kubernetes
// scheduler touches it. Its one container runs the task's image with its
// pull policy, the task's command and arguments overriding the image's
// entrypoint when given; a task without an image runs its command in the
// plugin's image (Config.Image). The container gets the task's environment,
// the shard's (PELOTON_*, PORT_<NAME>), each named port as a host port with
// the same container port number, the health check as liveness probe and
// the readiness check as readiness probe (on the resolved port number,
// timings rounded up to whole seconds), and requests and limits from the
// task's resources. The pod carries the run's labels and the run id as an
// annotation. At most LaunchParallelism creates (32) are in flight; the
// client speaks protobuf and sets no client-side rate limit unless
// Config.QPS asks for one, leaving the pace to the API server's priority
// and fairness (config.go says why).
//
// Pods have restartPolicy Never: one pod is one run, and the shard restarts
// what fails, as on every host manager (health.go says how probes become
// Health and Ready, and why). Pod phases and container states become task
// statuses (RUNNING, SUCCEEDED, FAILED with exit code, OOM kills, health
// check kills and image pull errors), and RUNNING again whenever Health or
// Ready change; a pod deleted by someone else, a node deleted, or a node not
// Ready past a grace period makes its runs LOST. Kill deletes the pod with
// the task's grace period. Reconcile, after a shard restart, finds pods by
// their run id and reports what they do, LOST when there is none. Finished
// pods are deleted some time after their end was reported.
//
// Stateful volumes (volumes.go) are local PersistentVolumes under
// Config.VolumeBasePath on the instance's node, prebound to a
// PersistentVolumeClaim per volume id, mounted at the volume's path, reused
// by later runs and deleted by RemoveVolumes. The node must have the
// directory <VolumeBasePath>/<namespace>/<claim> (a local volume has no
// provisioner). Gang members (gang.go) find the gang in a ConfigMap mounted
// at hostmgr.GangFilePath and named by PELOTON_GANG_FILE; it goes with its
// pod.
//
// Permissions the plugin needs (RBAC, least privilege):
//
//	nodes                    list watch          cluster-wide
//	pods                     list watch          cluster-wide (others' requests
//	                                             count against node capacity)
//	pods                     create delete       the plugin's namespace
//	persistentvolumes        get create delete   cluster-wide
//	persistentvolumeclaims   get create delete   the plugin's namespace
//	configmaps               list create delete  the plugin's namespace
//
// The pure conversions (node → host, pod → status and health, launch → pod,
// volume and config map) live in convert.go, pod.go, health.go and the
// object builders of volumes.go and gang.go; they take no clock (only a
// now) and do no I/O. The package imports shard/hostmgr, shard/model,
// shard/clock and client-go; never another plugin, the job or resource
// manager, or the store.
package k8s
