package mesos

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// Environment variables a task gets besides its own.
const (
	EnvRunID = "PELOTON_RUN_ID"
	// EnvGang holds the run's gang as JSON (a list of hostmgr.GangMember).
	// Mesos gets no gang file: the command executor fetches files only
	// from URIs, and the members are known only at launch.
	EnvGang = "PELOTON_GANG"
	// EnvVolumePrefix + the volume's name (as PORT_<NAME> is made) holds
	// where a persistent volume is: its path in an image, else its
	// directory relative to the sandbox, the task's working directory.
	EnvVolumePrefix = "PELOTON_VOLUME_"
)

// labelVolume labels the reservation of a persistent volume with its id,
// so that its disk is found again to unreserve it.
const labelVolume = "peloton.volume"

// launchSpec is a launch with what was carved for it from the offers.
type launchSpec struct {
	l         *hostmgr.Launch
	agentID   string
	resources []mesoslib.Resource
	// volumes are the launch's persistent volume resources, in the order
	// of l.Volumes.
	volumes []mesoslib.Resource
}

// checkLaunch returns why a launch cannot be turned into a TaskInfo, or "".
func checkLaunch(l *hostmgr.Launch, role string) string {
	t := l.Task
	switch {
	case t == nil:
		return "no task spec"
	case t.Command == "" && t.Container == nil:
		return "task has no command and no container image"
	case len(l.Volumes) > 0 && role == "*":
		return `persistent volumes need a Mesos framework role other than "*" (set role= of the mesos cluster)`
	}
	if len(l.Ports) != len(t.Ports) {
		return fmt.Sprintf("%d host ports assigned for %d named ports", len(l.Ports), len(t.Ports))
	}
	for _, p := range l.Ports {
		if p.Port == 0 || p.Port > 65535 {
			return fmt.Sprintf("port %q was assigned host port %d", p.Name, p.Port)
		}
	}
	for _, probe := range []struct {
		what string
		h    *model.HealthCheck
	}{{"health check", t.HealthCheck}, {"readiness probe", t.Readiness}} {
		if h := probe.h; h != nil && (h.Kind == model.ProbeHTTP || h.Kind == model.ProbeTCP) && h.ResolvePort(l.Ports) == 0 {
			return fmt.Sprintf("%s port %q names no port of the task", probe.what, h.Port)
		}
	}
	return ""
}

// taskInfo builds the TaskInfo of a launch: the command or the image's
// entrypoint run by the Mesos containerizer, the environment, labels,
// kill policy, health check and check, and the persistent volumes, each
// mounted in the sandbox under its name and, in an image, at its path.
func taskInfo(s *launchSpec) mesoslib.TaskInfo {
	l, t := s.l, s.l.Task
	run := string(l.Run)
	ti := mesoslib.TaskInfo{
		Name:      run,
		TaskID:    mesoslib.TaskID{Value: run},
		AgentID:   mesoslib.AgentID{Value: s.agentID},
		Resources: append(append([]mesoslib.Resource(nil), s.resources...), s.volumes...),
		Command:   commandInfo(t.Command, t.Args, t.Container != nil),
	}
	ti.Command.Environment = environment(l)
	if t.Container != nil || len(l.Volumes) > 0 {
		ti.Container = containerInfo(t.Container, l.Volumes)
	}
	if len(l.Labels) > 0 {
		ti.Labels = labels(l.Labels)
	}
	if t.KillGrace > 0 {
		ti.KillPolicy = &mesoslib.KillPolicy{GracePeriod: &mesoslib.DurationInfo{Nanoseconds: t.KillGrace.Nanoseconds()}}
	}
	if h := t.HealthCheck; h != nil {
		ti.HealthCheck = healthCheck(h, l.Ports)
	}
	if h := t.Readiness; h != nil {
		ti.Check = check(h, l.Ports)
	}
	return ti
}

// commandInfo runs command with args as argv (no shell). In an image
// without a command, it has no value: the image's entrypoint runs, with
// args as its arguments.
func commandInfo(command string, args []string, image bool) *mesoslib.CommandInfo {
	shell := false
	c := &mesoslib.CommandInfo{Shell: &shell}
	if command == "" && image {
		c.Arguments = append([]string(nil), args...)
		return c
	}
	value := command
	c.Value = &value
	c.Arguments = append([]string{command}, args...)
	return c
}

// environment is the task's own environment, then what the shard adds,
// then the run id, the volumes and the gang.
func environment(l *hostmgr.Launch) *mesoslib.Environment {
	vars := map[string]string{}
	for k, v := range l.Task.Env {
		vars[k] = v
	}
	for k, v := range l.Env {
		vars[k] = v
	}
	vars[EnvRunID] = string(l.Run)
	for _, v := range l.Volumes {
		where := volumeDir(v)
		if l.Task.Container != nil {
			where = v.Volume.Path
		}
		vars[EnvVolumePrefix+strings.TrimPrefix(model.PortEnv(v.Volume.Name), "PORT_")] = where
	}
	if len(l.Gang) > 0 {
		if b, err := json.Marshal(l.Gang); err == nil {
			vars[EnvGang] = string(b)
		}
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	env := &mesoslib.Environment{Variables: make([]mesoslib.Environment_Variable, 0, len(names))}
	for _, k := range names {
		v := vars[k]
		env.Variables = append(env.Variables, mesoslib.Environment_Variable{Name: k, Value: &v})
	}
	return env
}

// containerInfo is a Mesos containerizer container: the image as a
// Docker image (cached unless the pull policy is Always; Never cannot be
// said to Mesos and counts as cached), and in an image each persistent
// volume's sandbox directory mounted at the volume's path.
func containerInfo(c *model.Container, vols []hostmgr.VolumeMount) *mesoslib.ContainerInfo {
	ci := &mesoslib.ContainerInfo{Type: mesoslib.ContainerInfo_MESOS.Enum()}
	if c == nil {
		return ci
	}
	cached := c.PullPolicy != model.PullAlways
	ci.Mesos = &mesoslib.ContainerInfo_MesosInfo{Image: &mesoslib.Image{
		Type: mesoslib.Image_DOCKER.Enum(), Docker: &mesoslib.Image_Docker{Name: c.Image}, Cached: &cached}}
	for _, v := range vols {
		ci.Volumes = append(ci.Volumes, mesoslib.Volume{
			Mode:          mesoslib.RW.Enum(),
			ContainerPath: v.Volume.Path,
			Source: &mesoslib.Volume_Source{Type: mesoslib.Volume_Source_SANDBOX_PATH,
				SandboxPath: &mesoslib.Volume_Source_SandboxPath{Type: mesoslib.Volume_Source_SandboxPath_SELF, Path: volumeDir(v)}},
		})
	}
	return ci
}

// volumeDir is where a persistent volume is mounted in the sandbox: its
// name, a non-nested relative path as Mesos requires.
func volumeDir(v hostmgr.VolumeMount) string {
	name := v.Volume.Name
	if name == "" {
		name = path.Base(v.Volume.Path)
	}
	return strings.ReplaceAll(name, "/", "_")
}

func labels(m map[string]string) *mesoslib.Labels {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := &mesoslib.Labels{}
	for _, k := range keys {
		v := m[k]
		out.Labels = append(out.Labels, mesoslib.Label{Key: k, Value: &v})
	}
	return out
}

// healthCheck maps a health check: its initial delay is both Mesos's
// delay and grace period, so that failures count from the first probe.
func healthCheck(h *model.HealthCheck, ports []model.NamedPort) *mesoslib.HealthCheck {
	hc := h.WithDefaults()
	delay, every, timeout := hc.InitialDelay.Seconds(), hc.Interval.Seconds(), hc.Timeout.Seconds()
	failures := hc.FailureThreshold
	out := &mesoslib.HealthCheck{DelaySeconds: &delay, IntervalSeconds: &every, TimeoutSeconds: &timeout,
		ConsecutiveFailures: &failures, GracePeriodSeconds: &delay}
	switch hc.Kind {
	case model.ProbeCommand:
		out.Type = mesoslib.HealthCheck_COMMAND
		out.Command = commandInfo(hc.Command, hc.Args, false)
	case model.ProbeHTTP:
		out.Type = mesoslib.HealthCheck_HTTP
		scheme, p := "http", probePath(hc.Path)
		out.HTTP = &mesoslib.HealthCheck_HTTPCheckInfo{Port: hc.ResolvePort(ports), Path: &p, Scheme: &scheme}
	case model.ProbeTCP:
		out.Type = mesoslib.HealthCheck_TCP
		out.TCP = &mesoslib.HealthCheck_TCPCheckInfo{Port: hc.ResolvePort(ports)}
	}
	return out
}

// check maps a readiness probe to a Mesos check, which the executors run
// and report without acting on.
func check(h *model.HealthCheck, ports []model.NamedPort) *mesoslib.CheckInfo {
	hc := h.WithDefaults()
	delay, every, timeout := hc.InitialDelay.Seconds(), hc.Interval.Seconds(), hc.Timeout.Seconds()
	out := &mesoslib.CheckInfo{DelaySeconds: &delay, IntervalSeconds: &every, TimeoutSeconds: &timeout}
	switch hc.Kind {
	case model.ProbeCommand:
		out.Type = mesoslib.CheckInfo_COMMAND
		out.Command = &mesoslib.CheckInfo_Command{Command: *commandInfo(hc.Command, hc.Args, false)}
	case model.ProbeHTTP:
		out.Type = mesoslib.CheckInfo_HTTP
		p := probePath(hc.Path)
		out.HTTP = &mesoslib.CheckInfo_Http{Port: hc.ResolvePort(ports), Path: &p}
	case model.ProbeTCP:
		out.Type = mesoslib.CheckInfo_TCP
		out.TCP = &mesoslib.CheckInfo_Tcp{Port: hc.ResolvePort(ports)}
	}
	return out
}

func probePath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// checkVerdict reads a check status: HTTP 2xx/3xx, a TCP connection or
// exit 0 is ready; no result yet is unknown.
func checkVerdict(cs *mesoslib.CheckStatusInfo) model.HealthState {
	switch {
	case cs.HTTP != nil && cs.HTTP.StatusCode != nil:
		if c := cs.HTTP.GetStatusCode(); c >= 200 && c < 400 {
			return model.HealthHealthy
		}
		return model.HealthUnhealthy
	case cs.TCP != nil && cs.TCP.Succeeded != nil:
		if cs.TCP.GetSucceeded() {
			return model.HealthHealthy
		}
		return model.HealthUnhealthy
	case cs.Command != nil && cs.Command.ExitCode != nil:
		if cs.Command.GetExitCode() == 0 {
			return model.HealthHealthy
		}
		return model.HealthUnhealthy
	}
	return model.HealthUnknown
}
