package k8s

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

var testPodCfg = podSpecConfig{Namespace: "batch", SchedulerName: "peloton", Image: "busybox", GPUResource: DefaultGPUResource,
	VolumeBasePath: "/data/peloton", StorageClass: "peloton-local"}

func TestLaunchPodIdentity(t *testing.T) {
	task := &model.TaskSpec{Command: "sh", Args: []string{"-c", "exit 0"}, Env: map[string]string{"B": "2", "A": "1"},
		Resources: model.Resources{MilliCPU: 250, MemMB: 64, GPU: 1}, KillGrace: 1500 * time.Millisecond}
	labels := map[string]string{"peloton.job": "j1", "peloton.instance": "0", "bad key!": "x", "peloton.note": "has spaces"}
	pod, err := launchPod(testPodCfg, "n1", hostmgr.Launch{Run: "j1-0-2", Host: "east/n1", Task: task, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "j1-0-2" || pod.Namespace != "batch" || pod.Spec.NodeName != "n1" || pod.Spec.SchedulerName != "peloton" {
		t.Fatalf("placement fields: %+v", pod.ObjectMeta)
	}
	if pod.Annotations[AnnotationRunID] != "j1-0-2" || pod.Annotations[AnnotationHostID] != "east/n1" || !isOurs(pod, "batch") {
		t.Fatalf("annotations: %v labels %v", pod.Annotations, pod.Labels)
	}
	if _, ok := pod.Labels["bad key!"]; ok || pod.Labels["peloton.note"] != "has_spaces" || pod.Labels["peloton.job"] != "j1" {
		t.Fatalf("labels: %v", pod.Labels)
	}
	if *pod.Spec.TerminationGracePeriodSeconds != 2 || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("grace %d restart %s", *pod.Spec.TerminationGracePeriodSeconds, pod.Spec.RestartPolicy)
	}
	c := pod.Spec.Containers[0]
	if got := resourcesOf(c.Resources.Requests, DefaultGPUResource); got != task.Resources {
		t.Fatalf("round trip of resources: %+v, want %+v", got, task.Resources)
	}
}

// The task's container, case by case: image and command, pull policy,
// environment, ports, probes and resources.
func TestTaskContainer(t *testing.T) {
	web := model.TaskSpec{Container: &model.Container{Image: "nginx:1.27", PullPolicy: model.PullAlways},
		Ports: []model.PortSpec{{Name: "http"}, {Name: "admin-port", Port: 9000}}}
	ports := []model.NamedPort{{Name: "http", Port: 31002}, {Name: "admin-port", Port: 9000}}
	httpCheck := &model.HealthCheck{Kind: model.ProbeHTTP, Port: "http", Path: "/health",
		InitialDelay: 2500 * time.Millisecond, Interval: 300 * time.Millisecond, Timeout: 1500 * time.Millisecond, FailureThreshold: 2}
	withChecks := web
	withChecks.HealthCheck = httpCheck
	withChecks.Readiness = &model.HealthCheck{Kind: model.ProbeTCP, Port: "9000"}
	cmdCheck := web
	cmdCheck.HealthCheck = &model.HealthCheck{Kind: model.ProbeCommand, Command: "cat", Args: []string{"/tmp/ok"}}
	tests := []struct {
		name  string
		task  model.TaskSpec
		ports []model.NamedPort
		env   map[string]string
		check func(t *testing.T, c corev1.Container)
	}{
		{name: "command only runs in the plugin's image", task: model.TaskSpec{Command: "sleep", Args: []string{"5"}},
			check: func(t *testing.T, c corev1.Container) {
				if c.Image != "busybox" || c.ImagePullPolicy != "" || !reflect.DeepEqual(c.Command, []string{"sleep"}) || !reflect.DeepEqual(c.Args, []string{"5"}) {
					t.Fatalf("image %q policy %q command %v args %v", c.Image, c.ImagePullPolicy, c.Command, c.Args)
				}
			}},
		{name: "image keeps its entrypoint without a command", task: model.TaskSpec{Container: &model.Container{Image: "redis:7"}, Args: []string{"--port", "7000"}},
			check: func(t *testing.T, c corev1.Container) {
				if c.Image != "redis:7" || c.Command != nil || len(c.Args) != 2 || c.ImagePullPolicy != "" {
					t.Fatalf("image %q command %v args %v policy %q", c.Image, c.Command, c.Args, c.ImagePullPolicy)
				}
			}},
		{name: "image with a command overrides the entrypoint", task: model.TaskSpec{Container: &model.Container{Image: "alpine", PullPolicy: model.PullNever}, Command: "/bin/run"},
			check: func(t *testing.T, c corev1.Container) {
				if c.Image != "alpine" || c.Command[0] != "/bin/run" || c.ImagePullPolicy != corev1.PullNever {
					t.Fatalf("image %q command %v policy %q", c.Image, c.Command, c.ImagePullPolicy)
				}
			}},
		{name: "pull if not present", task: model.TaskSpec{Container: &model.Container{Image: "alpine", PullPolicy: model.PullIfNotPresent}},
			check: func(t *testing.T, c corev1.Container) {
				if c.ImagePullPolicy != corev1.PullIfNotPresent {
					t.Fatalf("policy %q", c.ImagePullPolicy)
				}
			}},
		{name: "env: task, run identity, then the shard's, sorted", task: model.TaskSpec{Command: "x", Env: map[string]string{"Z": "1", "PORT_HTTP": "mine"}},
			env: map[string]string{"PORT_HTTP": "31002", "PELOTON_INSTANCE": "3"},
			check: func(t *testing.T, c corev1.Container) {
				want := []corev1.EnvVar{{Name: "PELOTON_HOST_ID", Value: "east/n1"}, {Name: "PELOTON_INSTANCE", Value: "3"},
					{Name: "PELOTON_RUN_ID", Value: "j1-3-1"}, {Name: "PORT_HTTP", Value: "31002"}, {Name: "Z", Value: "1"}}
				if !reflect.DeepEqual(c.Env, want) {
					t.Fatalf("env %v, want %v", c.Env, want)
				}
			}},
		{name: "named ports are host ports of the same number", task: web, ports: ports,
			check: func(t *testing.T, c corev1.Container) {
				want := []corev1.ContainerPort{{Name: "http", HostPort: 31002, ContainerPort: 31002, Protocol: corev1.ProtocolTCP},
					{Name: "admin-port", HostPort: 9000, ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
				if !reflect.DeepEqual(c.Ports, want) || c.LivenessProbe != nil || c.ReadinessProbe != nil {
					t.Fatalf("ports %+v, want %+v; probes %v %v", c.Ports, want, c.LivenessProbe, c.ReadinessProbe)
				}
			}},
		{name: "http health check and tcp readiness on resolved ports, whole seconds", task: withChecks, ports: ports,
			check: func(t *testing.T, c corev1.Container) {
				want := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health",
					Port: intstr.FromInt32(31002), Scheme: corev1.URISchemeHTTP}},
					InitialDelaySeconds: 3, PeriodSeconds: 1, TimeoutSeconds: 2, FailureThreshold: 2}
				if !reflect.DeepEqual(c.LivenessProbe, want) {
					t.Fatalf("liveness %+v, want %+v", c.LivenessProbe, want)
				}
				r := c.ReadinessProbe
				if r == nil || r.TCPSocket == nil || r.TCPSocket.Port.IntValue() != 9000 || r.PeriodSeconds != 10 ||
					r.TimeoutSeconds != 1 || r.FailureThreshold != 3 || r.InitialDelaySeconds != 0 {
					t.Fatalf("readiness %+v: want tcp 9000 with the default timings", r)
				}
			}},
		{name: "command health check", task: cmdCheck, ports: ports,
			check: func(t *testing.T, c corev1.Container) {
				if e := c.LivenessProbe.Exec; e == nil || !reflect.DeepEqual(e.Command, []string{"cat", "/tmp/ok"}) {
					t.Fatalf("liveness %+v", c.LivenessProbe)
				}
			}},
		{name: "resources: cpu requested, memory and gpu limited", task: model.TaskSpec{Command: "x", Resources: model.Resources{MilliCPU: 1500, MemMB: 300, GPU: 2}},
			check: func(t *testing.T, c corev1.Container) {
				r := c.Resources
				gpu := r.Limits[DefaultGPUResource]
				if r.Requests.Cpu().MilliValue() != 1500 || r.Limits.Cpu().MilliValue() != 0 || r.Requests.Memory().Value() != 300*mib ||
					r.Limits.Memory().Value() != 300*mib || gpu.Value() != 2 {
					t.Fatalf("resources %+v", r)
				}
			}},
		{name: "no gpu asked, none requested", task: model.TaskSpec{Command: "x", Resources: model.Resources{MilliCPU: 1000}},
			check: func(t *testing.T, c corev1.Container) {
				if _, ok := c.Resources.Requests[DefaultGPUResource]; ok || len(c.Resources.Limits) != 0 {
					t.Fatalf("resources %+v", c.Resources)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := tc.task
			pod, err := launchPod(testPodCfg, "n1", hostmgr.Launch{Run: "j1-3-1", Host: "east/n1", Task: &task, Ports: tc.ports, Env: tc.env})
			if err != nil {
				t.Fatal(err)
			}
			if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != TaskContainer {
				t.Fatalf("containers %+v", pod.Spec.Containers)
			}
			tc.check(t, pod.Spec.Containers[0])
		})
	}
}

// Launches that cannot make a pod say what is wrong.
func TestLaunchPodRefuses(t *testing.T) {
	http := &model.HealthCheck{Kind: model.ProbeHTTP, Port: "web"}
	vol := hostmgr.VolumeMount{ID: "j-0-data", Volume: model.Volume{Name: "data", SizeMB: 10, Path: "/data"}}
	tests := []struct {
		name string
		l    hostmgr.Launch
		want string
	}{
		{"no task", hostmgr.Launch{}, "no task spec"},
		{"neither image nor command", hostmgr.Launch{Task: &model.TaskSpec{}}, "neither an image nor a command"},
		{"bad env name", hostmgr.Launch{Task: &model.TaskSpec{Command: "x", Env: map[string]string{"A=B": "1"}}}, `env name "A=B"`},
		{"unknown pull policy", hostmgr.Launch{Task: &model.TaskSpec{Container: &model.Container{Image: "a", PullPolicy: 9}}}, "pull policy 9"},
		{"ports not assigned", hostmgr.Launch{Task: &model.TaskSpec{Command: "x", Ports: []model.PortSpec{{Name: "web"}}}}, "1 ports but 0 host ports"},
		{"probe of an unknown port", hostmgr.Launch{Task: &model.TaskSpec{Command: "x", HealthCheck: http}}, `health check: port "web"`},
		{"probe of no kind", hostmgr.Launch{Task: &model.TaskSpec{Command: "x", Readiness: &model.HealthCheck{}}}, "readiness: probe kind 0"},
		{"relative volume path", hostmgr.Launch{Task: &model.TaskSpec{Command: "x"}, Volumes: []hostmgr.VolumeMount{{ID: "v", Volume: model.Volume{Name: "d", SizeMB: 1, Path: "data"}}}}, "must be absolute"},
		{"volume without size", hostmgr.Launch{Task: &model.TaskSpec{Command: "x"}, Volumes: []hostmgr.VolumeMount{{ID: "v", Volume: model.Volume{Name: "d", Path: "/d"}}}}, "size 0 MB"},
		{"port out of range", hostmgr.Launch{Task: &model.TaskSpec{Command: "x", Ports: []model.PortSpec{{Name: "web"}}}, Ports: []model.NamedPort{{Name: "web", Port: 70000}}}, "out of range"},
		{"valid volume", hostmgr.Launch{Task: &model.TaskSpec{Command: "x"}, Volumes: []hostmgr.VolumeMount{vol}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := launchPod(testPodCfg, "n1", tc.l)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// A stateful instance's volume: a local volume on its node prebound to a
// claim, mounted at the volume's path.
func TestVolumes(t *testing.T) {
	vols := []hostmgr.VolumeMount{
		{ID: "job1-0-data", Volume: model.Volume{Name: "data", SizeMB: 512, Path: "/var/data/"}},
		{ID: "job1-0-logs", Volume: model.Volume{Name: "logs", SizeMB: 64, Path: "/logs"}},
	}
	pod, err := launchPod(testPodCfg, "n1", hostmgr.Launch{Run: "job1-0-1", Host: "east/n1", Task: &model.TaskSpec{Command: "x"}, Volumes: vols})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if len(pod.Spec.Volumes) != 2 || len(c.VolumeMounts) != 2 {
		t.Fatalf("volumes %+v mounts %+v", pod.Spec.Volumes, c.VolumeMounts)
	}
	for i, want := range []struct{ claim, path string }{{"job1-0-data", "/var/data"}, {"job1-0-logs", "/logs"}} {
		v, m := pod.Spec.Volumes[i], c.VolumeMounts[i]
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != want.claim || m.Name != v.Name || m.MountPath != want.path {
			t.Fatalf("volume %d: %+v mounted %+v, want claim %s at %s", i, v, m, want.claim, want.path)
		}
	}
	pv, pvc, err := volumeObjects(testPodCfg, "n1", vols[0])
	if err != nil {
		t.Fatal(err)
	}
	if pv.Name != "batch-job1-0-data" || pv.Spec.Local == nil || pv.Spec.Local.Path != "/data/peloton/batch/job1-0-data" ||
		pv.Spec.StorageClassName != "peloton-local" || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Fatalf("volume %s: %+v", pv.Name, pv.Spec)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.Value() != 512*mib || volumeNode(pv) != "n1" {
		t.Fatalf("capacity %v node %q", q.String(), volumeNode(pv))
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != "batch" || ref.Name != pvc.Name {
		t.Fatalf("claimRef %+v, want batch/%s", ref, pvc.Name)
	}
	if pvc.Name != "job1-0-data" || pvc.Namespace != "batch" || pvc.Spec.VolumeName != pv.Name || *pvc.Spec.StorageClassName != "peloton-local" ||
		pvc.Spec.Resources.Requests.Storage().Value() != 512*mib || pvc.Annotations[AnnotationVolumeID] != "job1-0-data" {
		t.Fatalf("claim %s: %+v", pvc.Name, pvc.Spec)
	}
	if _, _, err := volumeObjects(testPodCfg, "n1", hostmgr.VolumeMount{ID: "x"}); err == nil {
		t.Fatal("a volume without size was accepted")
	}
}

// A gang member finds the members in a config map mounted as a file, and
// the file's path in its environment.
func TestGang(t *testing.T) {
	members := []hostmgr.GangMember{
		{Instance: 0, Host: "east/n1", Hostname: "n1", Ports: []model.NamedPort{{Name: "rpc", Port: 31000}}},
		{Instance: 1, Host: "east/n2", Hostname: "n2"},
	}
	pod, err := launchPod(testPodCfg, "n1", hostmgr.Launch{Run: "j-0-1", Host: "east/n1", Task: &model.TaskSpec{Command: "x"}, Gang: members})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	var mount *corev1.VolumeMount
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == hostmgr.GangFilePath {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil || mount.SubPath != gangConfigKey || !mount.ReadOnly || pod.Annotations[AnnotationGangConfig] != pod.Name {
		t.Fatalf("mounts %+v annotations %v", c.VolumeMounts, pod.Annotations)
	}
	v := pod.Spec.Volumes[len(pod.Spec.Volumes)-1]
	if v.Name != mount.Name || v.ConfigMap == nil || v.ConfigMap.Name != pod.Name {
		t.Fatalf("volume %+v", v)
	}
	var gangEnv string
	for _, e := range c.Env {
		if e.Name == hostmgr.EnvGangFile {
			gangEnv = e.Value
		}
	}
	if gangEnv != hostmgr.GangFilePath {
		t.Fatalf("env %v", c.Env)
	}
	cm, err := gangConfigMap("batch", "j-0-1", members)
	if err != nil {
		t.Fatal(err)
	}
	var back []hostmgr.GangMember
	if err := json.Unmarshal([]byte(cm.Data[gangConfigKey]), &back); err != nil || !reflect.DeepEqual(back, members) {
		t.Fatalf("config map data %q: %v", cm.Data[gangConfigKey], err)
	}
	if cm.Name != pod.Name || cm.Namespace != "batch" || cm.Labels[LabelGang] != "true" || cm.Annotations[AnnotationRunID] != "j-0-1" {
		t.Fatalf("config map %+v", cm.ObjectMeta)
	}
	// Without a gang: no file, no variable.
	pod, _ = launchPod(testPodCfg, "n1", hostmgr.Launch{Run: "j-0-1", Host: "east/n1", Task: &model.TaskSpec{Command: "x"}})
	if len(pod.Spec.Volumes) != 0 || pod.Annotations[AnnotationGangConfig] != "" {
		t.Fatalf("pod without gang: %+v", pod.Spec.Volumes)
	}
}
