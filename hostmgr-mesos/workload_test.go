package mesos

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// A container task reaches the master as a Mesos containerizer task with
// a Docker image, its exact host ports taken from the offer, its health
// check and check; its health verdicts come back as RUNNING statuses.
func TestContainerTaskWithPortsAndProbes(t *testing.T) {
	c := newCluster(t, mesostest.Config{KeepTaskInfos: true}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	h, _ := rp.sink.host("dc1/agent-0")
	if !h.RunsImages || len(h.Ports) != 1 || h.Ports[0] != (model.PortRange{From: 31000, To: 32000}) {
		t.Fatalf("host ports %v runs images %v", h.Ports, h.RunsImages)
	}
	l := hostmgr.Launch{Run: "web-0-1", Host: "dc1/agent-0",
		Task: &model.TaskSpec{Args: []string{"--serve"}, Resources: model.Resources{MilliCPU: 1000, MemMB: 128},
			Env:         map[string]string{mesostest.EnvDuration: "1h", "A": "spec"},
			Container:   &model.Container{Image: "registry.example/web:1", PullPolicy: model.PullAlways},
			Ports:       []model.PortSpec{{Name: "http"}, {Name: "admin", Port: 31999}},
			HealthCheck: &model.HealthCheck{Kind: model.ProbeHTTP, Port: "http", Path: "/healthz", InitialDelay: 50 * time.Millisecond, Interval: 50 * time.Millisecond, FailureThreshold: 2},
			Readiness:   &model.HealthCheck{Kind: model.ProbeTCP, Port: "admin", Interval: 50 * time.Millisecond}},
		Env:   map[string]string{"A": "launch", "PORT_HTTP": "31007", "PORT_ADMIN": "31999"},
		Ports: []model.NamedPort{{Name: "http", Port: 31007}, {Name: "admin", Port: 31999}},
		Gang:  []hostmgr.GangMember{{Instance: 0, Host: "dc1/agent-0", Hostname: "agent-0", Ports: []model.NamedPort{{Name: "http", Port: 31007}}}}}
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{l}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "healthy and ready", func() bool {
		st, _ := rp.sink.last("web-0-1")
		return st.State == model.TaskRunning && st.Health == model.HealthHealthy && st.Ready == model.HealthHealthy
	})
	ti, ok := c.m.TaskInfo("web-0-1")
	if !ok {
		t.Fatal("the master has no TaskInfo")
	}
	img := ti.GetContainer().GetMesos().GetImage()
	if ti.GetContainer().GetType() != mesoslib.ContainerInfo_MESOS || img.GetType() != mesoslib.Image_DOCKER ||
		img.GetDocker().GetName() != "registry.example/web:1" || img.GetCached() {
		t.Errorf("container %v", ti.Container)
	}
	if cmd := ti.GetCommand(); cmd.Value != nil || cmd.GetShell() || len(cmd.Arguments) != 1 || cmd.Arguments[0] != "--serve" {
		t.Errorf("command %v: want the image's entrypoint with the args", cmd)
	}
	env := mesostest.TaskEnv(ti)
	var gang []hostmgr.GangMember
	if env["A"] != "launch" || env["PORT_HTTP"] != "31007" || env[EnvRunID] != "web-0-1" || json.Unmarshal([]byte(env[EnvGang]), &gang) != nil || len(gang) != 1 || gang[0].Ports[0].Port != 31007 {
		t.Errorf("environment %v", env)
	}
	var ports mesoslib.Ranges
	for _, r := range ti.Resources {
		if r.Name == "ports" {
			ports = append(ports, r.GetRanges().GetRange()...)
		}
	}
	if ports = ports.Sort().Squash(); len(ports) != 2 || ports[0] != (mesoslib.Value_Range{Begin: 31007, End: 31007}) || ports[1] != (mesoslib.Value_Range{Begin: 31999, End: 31999}) {
		t.Errorf("port resources %v, want exactly 31007 and 31999", ports)
	}
	hc := ti.GetHealthCheck()
	if hc.GetType() != mesoslib.HealthCheck_HTTP || hc.GetHTTP().Port != 31007 || hc.GetHTTP().GetPath() != "/healthz" ||
		hc.GetConsecutiveFailures() != 2 || hc.GetDelaySeconds() != 0.05 || hc.GetIntervalSeconds() != 0.05 || hc.GetTimeoutSeconds() != 1 {
		t.Errorf("health check %v", hc)
	}
	if ck := ti.GetCheck(); ck.GetType() != mesoslib.CheckInfo_TCP || ck.GetTCP().Port != 31999 {
		t.Errorf("check %v", ck)
	}
	// The first RUNNING status of a probed run has no verdict yet.
	first := firstRunning(rp.sink, "web-0-1")
	if first.Health != model.HealthUnknown || first.Ready != model.HealthUnknown {
		t.Errorf("first RUNNING status health %v ready %v, want UNKNOWN", first.Health, first.Ready)
	}

	c.m.SetTaskReady("web-0-1", false)
	waitFor(t, "not ready", func() bool { st, _ := rp.sink.last("web-0-1"); return st.Ready == model.HealthUnhealthy })
	c.m.SetTaskHealthy("web-0-1", false)
	waitFor(t, "unhealthy", func() bool {
		for _, st := range rp.sink.all("web-0-1") {
			if st.State == model.TaskRunning && st.Health == model.HealthUnhealthy {
				return true
			}
		}
		return false
	})
	// Two failures in a row: the executor kills it; the shard sees a run
	// that failed its health check, not one it killed.
	st := waitState(t, rp.sink, "web-0-1", model.TaskFailed)
	if st.Reason != model.ReasonUnhealthy {
		t.Errorf("health-killed run: %+v", st)
	}
}

func firstRunning(s *recordingSink, run model.RunID) hostmgr.TaskStatus {
	for _, st := range s.all(run) {
		if st.State == model.TaskRunning {
			return st
		}
	}
	return hostmgr.TaskStatus{}
}

// A launch whose host port the agent's offers lack waits for an offer
// that has it, then is reported LOST naming the port; a launch that
// cannot become a task fails at once with why.
func TestLaunchRefusals(t *testing.T) {
	c := newCluster(t, mesostest.Config{}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, LaunchWait: 300 * time.Millisecond})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	l := launch("p-0-1", "dc1/agent-0", 1, nil)
	l.Task.Ports = []model.PortSpec{{Name: "http"}}
	l.Ports = []model.NamedPort{{Name: "http", Port: 40000}}
	noImage := launch("p-1-1", "dc1/agent-0", 1, nil)
	noImage.Task.Command = ""
	badProbe := launch("p-2-1", "dc1/agent-0", 1, nil)
	badProbe.Task.HealthCheck = &model.HealthCheck{Kind: model.ProbeTCP, Port: "grpc"}
	if err := rp.p.Launch(context.Background(), []hostmgr.Launch{l, noImage, badProbe}); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, rp.sink, "p-0-1", model.TaskLost)
	if st.Reason != model.ReasonLaunchError || !strings.Contains(st.Message, "40000") {
		t.Errorf("missing port: %+v", st)
	}
	for run, want := range map[model.RunID]string{"p-1-1": "no command and no container image", "p-2-1": `"grpc" names no port`} {
		st, _ := rp.sink.last(run)
		if st.State != model.TaskFailed || !strings.Contains(st.Message, want) {
			t.Errorf("%s: %+v, want FAILED with %q", run, st, want)
		}
	}
	if s := c.m.Stats(); s.TasksLaunched != 0 {
		t.Errorf("master launched %d tasks", s.TasksLaunched)
	}
}

// Subscribed with GPU_RESOURCES, the plugin sees GPU agents and places a
// GPU task there; without it, the master offers nothing of them.
func TestGPUCapability(t *testing.T) {
	specs := []mesostest.AgentSpec{{ID: "G", Hostname: "gpu-0", CPU: 8, MemMB: 8192, GPU: 2}, {ID: "P", Hostname: "cpu-0", CPU: 8, MemMB: 8192}}
	for _, without := range []bool{true, false} {
		c := newCluster(t, mesostest.Config{}, specs...)
		rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, WithoutGPUCapability: without})
		waitFor(t, "cpu host", func() bool { _, ok := rp.sink.host("dc1/cpu-0"); return ok })
		info, _ := c.m.FrameworkInfo(rp.p.FrameworkID())
		declared := false
		for _, cp := range info.Capabilities {
			declared = declared || cp.Type == mesoslib.FrameworkInfo_Capability_GPU_RESOURCES
		}
		if declared == without {
			t.Fatalf("without=%v: FrameworkInfo capabilities %v", without, info.Capabilities)
		}
		if without {
			time.Sleep(100 * time.Millisecond) // a few allocation rounds
			if _, ok := rp.sink.host("dc1/gpu-0"); ok {
				t.Error("without GPU_RESOURCES the GPU agent became a host")
			}
			continue
		}
		waitFor(t, "gpu host", func() bool { h, ok := rp.sink.host("dc1/gpu-0"); return ok && h.Capacity.GPU == 2 })
		l := launch("g-0-1", "dc1/gpu-0", 1, map[string]string{mesostest.EnvDuration: "10ms"})
		l.Task.Resources.GPU = 1
		if err := rp.p.Launch(context.Background(), []hostmgr.Launch{l}); err != nil {
			t.Fatal(err)
		}
		waitState(t, rp.sink, "g-0-1", model.TaskSucceeded)
	}
}

// A stateful instance's first launch reserves disk and creates its volume
// in the same ACCEPT; after the run ends, the next launch on that agent
// uses the volume the offer shows; RemoveVolumes destroys it and
// unreserves its disk.
func TestPersistentVolumeAcrossRuns(t *testing.T) {
	c := newCluster(t, mesostest.Config{KeepTaskInfos: true}, agents(1, 4, 4096)...)
	rp := startPlugin(t, Config{Masters: []string{c.srv.URL}, Principal: "peloton-fw"})
	waitFor(t, "host", func() bool { return rp.sink.hostCount() == 1 })
	vm := hostmgr.VolumeMount{ID: model.VolumeID(model.TaskID{Job: "db", Instance: 0}, "data"), Volume: model.Volume{Name: "data", SizeMB: 200, Path: "/var/lib/db"}}
	run := func(id model.RunID) {
		t.Helper()
		l := launch(string(id), "dc1/agent-0", 1, map[string]string{mesostest.EnvDuration: "30ms"})
		l.Task.Container = &model.Container{Image: "db:1"}
		l.Volumes = []hostmgr.VolumeMount{vm}
		if err := rp.p.Launch(context.Background(), []hostmgr.Launch{l}); err != nil {
			t.Fatal(err)
		}
		if st := waitEnded(t, rp.sink, id); st.State != model.TaskSucceeded {
			t.Fatalf("%s ended %+v", id, st)
		}
	}
	run("db-0-1")
	vols, _ := c.m.Volumes("S0")
	if len(vols) != 1 || vols[0].ID != "db-0-data" || vols[0].Role != DefaultRole || vols[0].Principal != "peloton-fw" || vols[0].SizeMB != 200 ||
		vols[0].ContainerPath != "data" || vols[0].Labels[labelVolume] != "db-0-data" {
		t.Fatalf("volumes after the first run: %+v", vols)
	}
	if s := c.m.Stats(); s.OperationsApplied != 2 || s.OperationsDropped != 0 {
		t.Fatalf("operations: %+v", s)
	}
	ti, _ := c.m.TaskInfo("db-0-1")
	if env := mesostest.TaskEnv(ti); env["PELOTON_VOLUME_DATA"] != "/var/lib/db" {
		t.Errorf("environment %v", env)
	}
	mounts := ti.GetContainer().GetVolumes()
	if len(mounts) != 1 || mounts[0].ContainerPath != "/var/lib/db" || mounts[0].GetSource().GetSandboxPath().GetPath() != "data" {
		t.Errorf("container volumes %v", mounts)
	}

	run("db-0-2")
	if s := c.m.Stats(); s.OperationsApplied != 2 || s.OperationsDropped != 0 {
		t.Errorf("second run reserved or created again: %+v %v", s, c.m.DroppedOperations())
	}
	if ti, _ := c.m.TaskInfo("db-0-2"); !usesVolume(ti, "db-0-data") {
		t.Errorf("second run's resources %v lack the volume", ti.Resources)
	}

	if err := rp.p.RemoveVolumes(context.Background(), "dc1/nowhere", []string{"x"}); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("removing on an unknown host: %v", err)
	}
	if err := rp.p.RemoveVolumes(context.Background(), "dc1/agent-0", []string{"db-0-data"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "volume and reservation gone", func() bool {
		vols, _ := c.m.Volumes("S0")
		resv, _ := c.m.Reservations("S0")
		return len(vols) == 0 && len(resv) == 0
	})
	if s := c.m.Stats(); s.OperationsApplied != 4 || s.OperationsDropped != 0 {
		t.Errorf("removal operations: %+v", s)
	}
}

func usesVolume(ti mesoslib.TaskInfo, id string) bool {
	for _, r := range ti.Resources {
		if r.GetDisk().GetPersistence().GetID() == id {
			return true
		}
	}
	return false
}

func waitEnded(t *testing.T, s *recordingSink, run model.RunID) hostmgr.TaskStatus {
	t.Helper()
	var st hostmgr.TaskStatus
	waitFor(t, string(run)+" ended", func() bool {
		st, _ = s.last(run)
		return st.State.IsTerminal()
	})
	return st
}
