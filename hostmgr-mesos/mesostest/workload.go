package mesostest

import (
	"fmt"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// validateWorkload checks what a task runs: its command, container,
// health check and check, as the master's task validation
// (src/master/validation.cpp, src/checks/checker.cpp) does. The emulated
// agents run the Mesos containerizer only, so a DOCKER container is
// refused here rather than failing on the agent.
func validateWorkload(ti *mesos.TaskInfo) string {
	image, msg := validateContainer(ti.Container)
	if msg != "" {
		return msg
	}
	if msg := validateCommand(ti.Command, image); msg != "" {
		return msg
	}
	if hc := ti.HealthCheck; hc != nil {
		if msg := validateHealthCheck(hc); msg != "" {
			return "HealthCheck: " + msg
		}
	}
	if ck := ti.Check; ck != nil {
		if msg := validateCheck(ck); msg != "" {
			return "CheckInfo: " + msg
		}
	}
	return ""
}

// validateContainer checks a task's container, if it has one, and says
// whether it has an image.
func validateContainer(c *mesos.ContainerInfo) (image bool, msg string) {
	if c == nil {
		return false, ""
	}
	switch c.GetType() {
	case mesos.ContainerInfo_MESOS:
	case mesos.ContainerInfo_DOCKER:
		return false, "ContainerInfo type DOCKER: the agents of this cluster run the Mesos containerizer only"
	default:
		return false, "ContainerInfo: unknown type " + c.GetType().String()
	}
	img := c.GetMesos().GetImage()
	if msg := validateImage(img); msg != "" {
		return false, msg
	}
	for i, v := range c.Volumes {
		if msg := validateContainerVolume(&v); msg != "" {
			return false, fmt.Sprintf("ContainerInfo.volumes[%d]: %s", i, msg)
		}
	}
	return img != nil, ""
}

// validateImage checks a Mesos container's image, if it has one.
func validateImage(img *mesos.Image) string {
	if img == nil {
		return ""
	}
	switch img.GetType() {
	case mesos.Image_DOCKER:
		if img.Docker == nil || img.Docker.Name == "" {
			return "ContainerInfo: a DOCKER image needs 'docker.name'"
		}
	case mesos.Image_APPC:
		if img.Appc == nil || img.Appc.Name == "" {
			return "ContainerInfo: an APPC image needs 'appc.name'"
		}
	default:
		return "ContainerInfo: unknown image type " + img.GetType().String()
	}
	return ""
}

// validateCommand checks a task's command, if it has one: a shell command
// needs a value, and one without a value runs the image's entrypoint.
func validateCommand(cmd *mesos.CommandInfo, image bool) string {
	switch {
	case cmd == nil:
	case cmd.GetShell() && cmd.GetValue() == "":
		return "CommandInfo: a shell command needs 'value'"
	case !cmd.GetShell() && cmd.GetValue() == "" && !image:
		return "CommandInfo: without 'value' the task runs its image's entrypoint, but it has no image"
	}
	return ""
}

func validateContainerVolume(v *mesos.Volume) string {
	if v.ContainerPath == "" {
		return "'container_path' is required"
	}
	src := v.GetSource()
	if src == nil {
		return ""
	}
	switch src.GetType() {
	case mesos.Volume_Source_SANDBOX_PATH:
		sp := src.GetSandboxPath()
		if sp == nil || sp.Path == "" {
			return "a SANDBOX_PATH volume needs 'sandbox_path.path'"
		}
		if strings.HasPrefix(sp.Path, "/") || strings.Contains(sp.Path, "..") {
			return "'sandbox_path.path' must be relative to the sandbox"
		}
	case mesos.Volume_Source_HOST_PATH:
		if src.GetHostPath() == nil || !strings.HasPrefix(src.GetHostPath().Path, "/") {
			return "a HOST_PATH volume needs an absolute 'host_path.path'"
		}
	}
	return ""
}

func validateTimings(delay, interval, timeout float64) string {
	if delay < 0 || interval < 0 || timeout < 0 {
		return "delay, interval and timeout must not be negative"
	}
	return ""
}

func validateHealthCheck(hc *mesos.HealthCheck) string {
	switch hc.GetType() {
	case mesos.HealthCheck_COMMAND:
		if hc.Command == nil {
			return "COMMAND health check must contain 'command'"
		}
		if hc.Command.GetValue() == "" {
			return "command health check needs a command value"
		}
	case mesos.HealthCheck_HTTP:
		h := hc.GetHTTP()
		if h == nil {
			return "HTTP health check must contain 'http'"
		}
		if h.Port == 0 || h.Port > 65535 {
			return fmt.Sprintf("HTTP health check port %d is invalid", h.Port)
		}
		if p := h.GetPath(); p != "" && !strings.HasPrefix(p, "/") {
			return fmt.Sprintf("The path '%s' of HTTP health check must start with '/'", p)
		}
		if s := h.GetScheme(); s != "" && s != "http" && s != "https" {
			return fmt.Sprintf("Unsupported HTTP health check scheme: '%s'", s)
		}
	case mesos.HealthCheck_TCP:
		t := hc.GetTCP()
		if t == nil {
			return "TCP health check must contain 'tcp'"
		}
		if t.Port == 0 || t.Port > 65535 {
			return fmt.Sprintf("TCP health check port %d is invalid", t.Port)
		}
	default:
		return "HealthCheck must specify 'type'"
	}
	if hc.GetGracePeriodSeconds() < 0 {
		return "grace period must not be negative"
	}
	return validateTimings(hc.GetDelaySeconds(), hc.GetIntervalSeconds(), hc.GetTimeoutSeconds())
}

func validateCheck(ck *mesos.CheckInfo) string {
	switch ck.GetType() {
	case mesos.CheckInfo_COMMAND:
		if ck.Command == nil || ck.Command.Command.GetValue() == "" {
			return "COMMAND check must contain 'command' with a value"
		}
	case mesos.CheckInfo_HTTP:
		if ck.HTTP == nil || ck.HTTP.Port == 0 || ck.HTTP.Port > 65535 {
			return "HTTP check must contain 'http' with a port"
		}
		if p := ck.HTTP.GetPath(); p != "" && !strings.HasPrefix(p, "/") {
			return fmt.Sprintf("The path '%s' of HTTP check must start with '/'", p)
		}
	case mesos.CheckInfo_TCP:
		if ck.TCP == nil || ck.TCP.Port == 0 || ck.TCP.Port > 65535 {
			return "TCP check must contain 'tcp' with a port"
		}
	default:
		return "CheckInfo must specify 'type'"
	}
	return validateTimings(ck.GetDelaySeconds(), ck.GetIntervalSeconds(), ck.GetTimeoutSeconds())
}
