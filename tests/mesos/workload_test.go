package mesos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// taskWhere waits until instance's task satisfies ok and returns it.
func (s *server) taskWhere(id string, instance uint32, what string, ok func(testkit.Task) bool) testkit.Task {
	s.T.Helper()
	var found testkit.Task
	waitFor(s.T, time.Minute, fmt.Sprintf("job %s instance %d %s", id, instance, what), func() bool {
		for _, tk := range s.Tasks(id) {
			if tk.Instance == instance && ok(tk) {
				found = tk
				return true
			}
		}
		return false
	})
	return found
}

func runID(job string, tk testkit.Task) string {
	return fmt.Sprintf("%s-%d-%d", job, tk.Instance, tk.Run)
}

// A service in a container image on Mesos: the master receives a Mesos
// containerizer task with the Docker image, exactly the host ports the job
// manager assigned (taken from the offer) and the HTTP health check on the
// named port; the health verdicts reach the API, and an instance whose
// health check fails runs again, HEALTHY.
func TestServiceInImageWithPortsAndHealthCheck(t *testing.T) {
	m := startMaster(t, 2, 4)
	s := startDev(t, t.TempDir(), m)
	id := s.CreateJob(`{"name":"web","type":"JOB_TYPE_SERVICE","instances":2,"task":{
		"container":{"image":"nginx:1.27","pullPolicy":"PULL_POLICY_ALWAYS"},
		"env":{"PELOTON_SIM_DURATION":"1h"},
		"ports":[{"name":"http"}],
		"healthCheck":{"http":{"port":"http","path":"/healthz"},"initialDelay":"0.2s","interval":"0.2s","failureThreshold":2},
		"readiness":{"tcp":{"port":"http"},"interval":"0.2s"},
		"resources":{"cpu":0.5,"memMb":128}}}`)
	var first testkit.Task
	for i := uint32(0); i < 2; i++ {
		tk := s.taskWhere(id, i, "RUNNING, HEALTHY and ready", func(tk testkit.Task) bool {
			return tk.State == "TASK_STATE_RUNNING" && tk.Health == "HEALTH_STATE_HEALTHY" && tk.Ready == "HEALTH_STATE_HEALTHY"
		})
		if i == 0 {
			first = tk
		}
		port := tk.Ports["http"]
		if port < 31000 || port > 32000 {
			t.Fatalf("instance %d port %v", i, tk.Ports)
		}
		ti, ok := m.TaskInfo(runID(id, tk))
		if !ok {
			t.Fatalf("the master has no task %s", runID(id, tk))
		}
		img := ti.GetContainer().GetMesos().GetImage()
		if ti.GetContainer().GetType() != mesoslib.ContainerInfo_MESOS || img.GetDocker().GetName() != "nginx:1.27" || img.GetCached() {
			t.Errorf("instance %d container %v", i, ti.Container)
		}
		if ti.GetCommand().Value != nil {
			t.Errorf("instance %d command %v: the image's entrypoint should run", i, ti.Command)
		}
		var ports []mesoslib.Value_Range
		for _, r := range ti.Resources {
			if r.Name == "ports" {
				ports = append(ports, r.GetRanges().GetRange()...)
			}
		}
		if len(ports) != 1 || ports[0] != (mesoslib.Value_Range{Begin: uint64(port), End: uint64(port)}) {
			t.Errorf("instance %d took ports %v from the offer, want exactly %d", i, ports, port)
		}
		hc := ti.GetHealthCheck()
		if hc.GetType() != mesoslib.HealthCheck_HTTP || hc.GetHTTP().Port != port || hc.GetHTTP().GetPath() != "/healthz" || hc.GetConsecutiveFailures() != 2 {
			t.Errorf("instance %d health check %v", i, hc)
		}
		if ck := ti.GetCheck(); ck.GetType() != mesoslib.CheckInfo_TCP || ck.GetTCP().Port != port {
			t.Errorf("instance %d check %v", i, ck)
		}
		if env := mesostest.TaskEnv(ti); env["PORT_HTTP"] != fmt.Sprint(port) {
			t.Errorf("instance %d environment %v", i, env)
		}
	}

	// Instance 0's health check fails from now on: it turns UNHEALTHY and
	// runs again; the new run passes.
	m.SetTaskHealthy(runID(id, first), false)
	second := s.taskWhere(id, 0, "running again, HEALTHY", func(tk testkit.Task) bool {
		return tk.Run > first.Run && tk.State == "TASK_STATE_RUNNING" && tk.Health == "HEALTH_STATE_HEALTHY"
	})
	if second.Ports["http"] == 0 {
		t.Errorf("second run has no port: %+v", second)
	}
	for _, tk := range s.Tasks(id) {
		if tk.Instance == 1 && tk.Run != 1 {
			t.Errorf("instance 1 was restarted too: %+v", tk)
		}
	}
	if st := m.Stats(); st.BadRequests != 0 {
		t.Errorf("master saw %d bad requests", st.BadRequests)
	}
}

// A GPU job places only because the framework declares GPU_RESOURCES:
// subscribed without it (a hidden test switch), the master offers nothing
// of the GPU agent and the job stays pending; restarted with it, the same
// framework is offered the GPUs and the job runs there.
func TestGPUJobNeedsTheGPUCapability(t *testing.T) {
	m := startMasterWith(t,
		mesostest.AgentSpec{ID: "G0", Hostname: "gpu-0", CPU: 4, MemMB: 4096, DiskMB: 1000, GPU: 2},
		mesostest.AgentSpec{ID: "C0", Hostname: "cpu-0", CPU: 4, MemMB: 4096, DiskMB: 1000})
	dir := t.TempDir()
	s := startDev(t, dir, m, "gpu-capability=false")
	const train = `{"name":"train","instances":1,"task":{"command":"train","env":{"PELOTON_SIM_DURATION":"200ms"},
		"resources":{"cpu":1,"memMb":256,"gpu":1}}}`
	// Without the capability no host the region knows has a GPU: a GPU
	// job is refused at once, saying so, rather than pending forever.
	waitFor(t, 30*time.Second, "the CPU agent known to the region", func() bool {
		code, body := s.HTTP("GET", "/v1/hosts", "")
		return code == 200 && strings.Contains(string(body), "cpu-0")
	})
	if code, body := s.HTTP("POST", "/v1/jobs", train); code != 400 || !strings.Contains(string(body), "task.resources.gpu") {
		t.Fatalf("GPU job without any GPU host: %d %s", code, body)
	}
	fw := m.FrameworkIDs()
	if len(fw) != 1 {
		t.Fatalf("frameworks %v", fw)
	}
	if info, _ := m.FrameworkInfo(fw[0]); hasCapability(info, mesoslib.FrameworkInfo_Capability_GPU_RESOURCES) {
		t.Fatalf("subscribed with GPU_RESOURCES despite gpu-capability=false: %v", info.Capabilities)
	}
	if m.Stats().TasksLaunched != 0 {
		t.Fatalf("%d tasks launched", m.Stats().TasksLaunched)
	}
	if out := s.MustCLI("host", "list"); strings.Contains(out, "gpu-0") {
		t.Errorf("the GPU agent is a host without GPU_RESOURCES:\n%s", out)
	}
	s.Stop()

	s = startDev(t, dir, m)
	waitFor(t, 30*time.Second, "the GPU host reported", func() bool { return strings.Contains(s.MustCLI("host", "list"), "gpu-0") })
	id := s.CreateJob(train)
	s.waitJob(id, "JOB_STATE_SUCCEEDED", time.Minute)
	if info, _ := m.FrameworkInfo(fw[0]); !hasCapability(info, mesoslib.FrameworkInfo_Capability_GPU_RESOURCES) {
		t.Errorf("resubscribed without GPU_RESOURCES: %v", info.Capabilities)
	}
	tasks := s.Tasks(id)
	if len(tasks) != 1 || tasks[0].Host != "gpu-0" {
		t.Fatalf("tasks %+v, want one on gpu-0", tasks)
	}
	ti, _ := m.TaskInfo(runID(id, tasks[0]))
	gpus := 0.0
	for _, r := range ti.Resources {
		if r.Name == "gpus" {
			gpus += r.GetScalar().GetValue()
		}
	}
	if gpus != 1 {
		t.Errorf("task took %v gpus, want 1: %v", gpus, ti.Resources)
	}
}

func hasCapability(info mesoslib.FrameworkInfo, c mesoslib.FrameworkInfo_Capability_Type) bool {
	for _, x := range info.Capabilities {
		if x.Type == c {
			return true
		}
	}
	return false
}

// A stateful instance's persistent volume is made by RESERVE and CREATE
// on its first run; when the run ends the instance runs again on the same
// agent with the same persistence id, and nothing is reserved or created
// again; deleting the job destroys the volume and unreserves its disk.
func TestStatefulVolumeSurvivesRestart(t *testing.T) {
	m := startMaster(t, 3, 2)
	s := startDev(t, t.TempDir(), m)
	id := s.CreateJob(`{"name":"db","type":"JOB_TYPE_STATEFUL","instances":1,"task":{
		"container":{"image":"postgres:16"},
		"env":{"PELOTON_SIM_DURATION":"1s"},
		"volumes":[{"name":"data","sizeMb":100,"path":"/var/lib/postgresql"}],
		"resources":{"cpu":0.5,"memMb":128,"diskMb":10}}}`)
	first := s.taskWhere(id, 0, "running", func(tk testkit.Task) bool { return tk.State == "TASK_STATE_RUNNING" })
	agent := "S" + strings.TrimPrefix(first.Host, "agent-")
	volumeID := id + "-0-data"
	vols, err := m.Volumes(agent)
	if err != nil || len(vols) != 1 || vols[0].ID != volumeID || vols[0].Role != "peloton" || vols[0].SizeMB != 100 {
		t.Fatalf("volumes on %s: %+v %v", agent, vols, err)
	}
	if st := m.Stats(); st.OperationsApplied != 2 {
		t.Fatalf("first run applied %d operations, want RESERVE and CREATE", st.OperationsApplied)
	}

	// The run ends; the instance runs again where its volume is.
	second := s.taskWhere(id, 0, "running again", func(tk testkit.Task) bool { return tk.Run > first.Run && tk.State == "TASK_STATE_RUNNING" })
	if second.Host != first.Host {
		t.Fatalf("run %d on %s, its volume is on %s", second.Run, second.Host, first.Host)
	}
	ti, _ := m.TaskInfo(runID(id, second))
	uses := false
	for _, r := range ti.Resources {
		uses = uses || r.GetDisk().GetPersistence().GetID() == volumeID
	}
	mounts := ti.GetContainer().GetVolumes()
	if !uses || len(mounts) != 1 || mounts[0].ContainerPath != "/var/lib/postgresql" {
		t.Errorf("second run's resources %v, mounts %v: want volume %s at /var/lib/postgresql", ti.Resources, mounts, volumeID)
	}
	if st := m.Stats(); st.OperationsApplied != 2 || st.OperationsDropped != 0 {
		t.Errorf("after the second run: %d operations applied, %d dropped (%v), want the first two only", st.OperationsApplied, st.OperationsDropped, m.DroppedOperations())
	}

	s.MustCLI("job", "stop", id)
	waitFor(t, time.Minute, "job killed", func() bool { return strings.HasSuffix(s.Job(id).Status.State, "KILLED") })
	if vols, _ := m.Volumes(agent); len(vols) != 1 {
		t.Errorf("stopping the job left volumes %+v, want it kept", vols)
	}
	s.MustCLI("job", "delete", id)
	waitFor(t, 30*time.Second, "volume destroyed and disk unreserved", func() bool {
		vols, _ := m.Volumes(agent)
		resv, _ := m.Reservations(agent)
		return len(vols) == 0 && len(resv) == 0
	})
}
