package pelotonv1

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
)

// Limits of what a task may ask for besides resources.
const (
	MaxImageLength      = 512
	MaxPorts            = 64
	MaxPortNameLength   = 15
	MaxVolumeNameLength = 63
	MaxVolumes          = 16
	MaxVolumeSizeMb     = 16 << 20 // 16 TiB
	MaxProbeDuration    = time.Hour
	MaxProbeFailures    = 100
	MaxSpreadLimits     = 8
)

var (
	// imageRef is a container image reference: an optional registry host
	// (with a port), a lower-case repository path, then a tag, a digest or
	// both.
	imageRef = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]{1,5})?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
		`(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`)
	// dnsLabel is a port or volume name: lower case letters, digits and
	// '-', starting with a letter, not ending with '-'.
	dnsLabel = regexp.MustCompile(`^[a-z]([a-z0-9-]*[a-z0-9])?$`)
)

// workload checks the container, ports, probes and volumes of a task.
func (v *specChecker) workload(path string, t *TaskSpec) {
	v.container(joinPath(path, "container"), t.GetContainer())
	names := v.ports(path, t.GetPorts())
	v.probe(joinPath(path, "health_check"), t.GetHealthCheck(), names)
	v.probe(joinPath(path, "readiness"), t.GetReadiness(), names)
	v.volumes(path, t.GetVolumes())
}

// container checks a task's container image and pull policy.
func (v *specChecker) container(path string, c *Container) {
	if c == nil {
		return
	}
	img := c.GetImage()
	switch {
	case img == "":
		v.add(joinPath(path, "image"), "is required")
	case len(img) > MaxImageLength:
		v.add(joinPath(path, "image"), fmt.Sprintf("must be at most %d characters", MaxImageLength))
	case !imageRef.MatchString(img):
		v.add(joinPath(path, "image"), fmt.Sprintf("%q is not an image reference such as nginx:1.27 or registry.example:5000/team/app@sha256:<64 hex>", img))
	}
	if p := c.GetPullPolicy(); p < PullPolicy_PULL_POLICY_UNSPECIFIED || p > PullPolicy_PULL_POLICY_NEVER {
		v.add(joinPath(path, "pull_policy"), fmt.Sprintf("unknown value %d", int32(p)))
	}
}

// ports checks a task's ports (path is the task's) and returns the index
// of each port by name, for the probes to refer to: the first port of a
// name, since a later one of the same name is refused.
func (v *specChecker) ports(path string, ports []*PortSpec) map[string]int {
	if len(ports) > MaxPorts {
		v.add(joinPath(path, "ports"), fmt.Sprintf("at most %d ports", MaxPorts))
	}
	names := map[string]int{}
	fixed := map[uint32]int{}
	for i, p := range ports {
		ppath := fmt.Sprintf("%s.ports[%d]", path, i)
		if p == nil {
			v.add(ppath, "must not be empty")
			continue
		}
		if msg := dnsNameProblem(p.GetName(), MaxPortNameLength); msg != "" {
			v.add(joinPath(ppath, "name"), msg)
		} else if j, dup := names[p.GetName()]; dup {
			v.add(joinPath(ppath, "name"), fmt.Sprintf("%q is already the name of ports[%d]", p.GetName(), j))
		} else {
			names[p.GetName()] = i
		}
		v.portNumber(joinPath(ppath, "port"), i, p.GetPort(), fixed)
	}
	return names
}

// portNumber checks the fixed host port of ports[i], 0 meaning any free
// one; fixed holds the index of each fixed port seen so far.
func (v *specChecker) portNumber(path string, i int, n uint32, fixed map[uint32]int) {
	if n > 65535 {
		v.add(path, fmt.Sprintf("%d is out of range (1-65535, or 0 for a free host port)", n))
		return
	}
	if n == 0 {
		return
	}
	if j, dup := fixed[n]; dup {
		v.add(path, fmt.Sprintf("%d is already the port of ports[%d]", n, j))
	} else {
		fixed[n] = i
	}
}

// dnsNameProblem says what is wrong with a port or volume name of at most
// max characters, or "".
func dnsNameProblem(name string, max int) string {
	switch {
	case name == "":
		return "is required"
	case len(name) > max || !dnsLabel.MatchString(name):
		return fmt.Sprintf("%q must be lower case letters, digits and '-', start with a letter, at most %d characters", name, max)
	}
	return ""
}

// volumes checks a task's volumes (path is the task's): names and mount
// paths are unique, a duplicate naming the last volume before it that
// used the same one.
func (v *specChecker) volumes(path string, vols []*Volume) {
	if len(vols) > MaxVolumes {
		v.add(joinPath(path, "volumes"), fmt.Sprintf("at most %d volumes", MaxVolumes))
	}
	names, paths := map[string]int{}, map[string]int{}
	for i, vol := range vols {
		vpath := fmt.Sprintf("%s.volumes[%d]", path, i)
		if vol == nil {
			v.add(vpath, "must not be empty")
			continue
		}
		if msg := dnsNameProblem(vol.GetName(), MaxVolumeNameLength); msg != "" {
			v.add(joinPath(vpath, "name"), msg)
		} else {
			v.unique(joinPath(vpath, "name"), "name", vol.GetName(), i, names)
		}
		if sz := vol.GetSizeMb(); sz < 1 || sz > MaxVolumeSizeMb {
			v.add(joinPath(vpath, "size_mb"), fmt.Sprintf("must be between 1 and %d", MaxVolumeSizeMb))
		}
		if msg := mountPathProblem(vol.GetPath()); msg != "" {
			v.add(joinPath(vpath, "path"), msg)
		} else {
			v.unique(joinPath(vpath, "path"), "path", vol.GetPath(), i, paths)
		}
	}
}

// unique reports volumes[i]'s field value if an earlier volume has it, and
// records i as its latest user in seen.
func (v *specChecker) unique(path, field, value string, i int, seen map[string]int) {
	if j, dup := seen[value]; dup {
		v.add(path, fmt.Sprintf("%q is already the %s of volumes[%d]", value, field, j))
	}
	seen[value] = i
}

// mountPathProblem says what is wrong with a volume's mount path, or "".
func mountPathProblem(p string) string {
	switch {
	case !strings.HasPrefix(p, "/") || p == "/":
		return "must be an absolute path other than /"
	case strings.ContainsRune(p, 0) || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return "must not contain NUL bytes or .."
	}
	return ""
}

// probe checks a health check or readiness probe; ports are the task's
// port names.
func (v *specChecker) probe(path string, h *HealthCheck, ports map[string]int) {
	if h == nil {
		return
	}
	kinds := 0
	if len(h.GetCommand()) > 0 {
		kinds++
		v.probeCommand(path, h.GetCommand())
	}
	if hp := h.GetHttp(); hp != nil {
		kinds++
		hpath := joinPath(path, "http")
		v.probePort(joinPath(hpath, "port"), hp.GetPort(), ports)
		if p := hp.GetPath(); p != "" && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, " \t\r\n") || hasControl(p)) {
			v.add(joinPath(hpath, "path"), "must start with / and hold no spaces or control characters")
		}
	}
	if tp := h.GetTcp(); tp != nil {
		kinds++
		v.probePort(joinPath(joinPath(path, "tcp"), "port"), tp.GetPort(), ports)
	}
	switch {
	case kinds == 0:
		v.add(path, "needs one of command, http or tcp")
	case kinds > 1:
		v.add(path, "sets more than one of command, http and tcp; use one")
	}
	v.probeDurations(path, h)
	if f := h.GetFailureThreshold(); f > MaxProbeFailures {
		v.add(joinPath(path, "failure_threshold"), fmt.Sprintf("must be at most %d", MaxProbeFailures))
	}
}

// probeCommand checks a probe's command: its first word names the command,
// and the words are bounded and free of NUL bytes.
func (v *specChecker) probeCommand(path string, command []string) {
	if strings.TrimSpace(command[0]) == "" {
		v.add(joinPath(path, "command[0]"), "must name the command to run")
	}
	if n := len(command); n > MaxArgs {
		v.add(joinPath(path, "command"), fmt.Sprintf("has %d words, more than %d", n, MaxArgs))
	}
	for i, a := range command {
		if len(a) > MaxArgBytes {
			v.add(fmt.Sprintf("%s.command[%d]", path, i), tooLong(len(a), MaxArgBytes))
		}
		if strings.ContainsRune(a, 0) {
			v.add(fmt.Sprintf("%s.command[%d]", path, i), "must not contain NUL bytes")
		}
	}
}

// probeDurations checks that a probe's durations, where set, are valid and
// between 0s and MaxProbeDuration.
func (v *specChecker) probeDurations(path string, h *HealthCheck) {
	for _, d := range []struct {
		name string
		d    *durationpb.Duration
	}{{"initial_delay", h.GetInitialDelay()}, {"interval", h.GetInterval()}, {"timeout", h.GetTimeout()}} {
		if d.d == nil {
			continue
		}
		if err := d.d.CheckValid(); err != nil || d.d.AsDuration() < 0 || d.d.AsDuration() > MaxProbeDuration {
			v.add(joinPath(path, d.name), fmt.Sprintf("must be between 0s and %s", MaxProbeDuration))
		}
	}
}

func (v *specChecker) probePort(path, port string, ports map[string]int) {
	if port == "" {
		v.add(path, "is required (a port name of the task, or a number)")
		return
	}
	if n, err := strconv.ParseUint(port, 10, 32); err == nil {
		if n < 1 || n > 65535 {
			v.add(path, fmt.Sprintf("%d is out of range (1-65535)", n))
		}
		return
	}
	if _, ok := ports[port]; !ok {
		v.add(path, fmt.Sprintf("%q is not the name of one of the task's ports", port))
	}
}

// volumesAllowed refuses volumes outside stateful jobs.
func (v *specChecker) volumesAllowed(path string, t JobType, task *TaskSpec) {
	if len(task.GetVolumes()) > 0 && t != JobType_JOB_TYPE_STATEFUL {
		v.add(joinPath(path, "volumes"), "only stateful jobs (type: stateful) have volumes")
	}
}

// daemon checks what a daemon job may not set: it runs one instance per
// matching host, so the hosts give its instance count.
func (v *specChecker) daemon(s *JobSpec) {
	if s.GetInstances() != 0 {
		v.add("instances", "must be left out for a daemon job: it runs one instance on every matching host")
	}
	if s.GetGangSize() > 1 {
		v.add("gang_size", "daemon jobs have no gangs")
	}
	if s.GetMaxPerHost() != 0 {
		v.add("max_per_host", "daemon jobs run one instance per host")
	}
	if len(s.GetOverrides()) > 0 {
		v.add("overrides", "daemon jobs have no instance overrides")
	}
}

// sla checks a job's disruption budget.
func (v *specChecker) sla(s *JobSpec) {
	raw := s.GetSla().GetMaxUnavailable()
	if s.GetSla() == nil || raw == "" {
		return
	}
	path := "sla.max_unavailable"
	n, pct, ok := ParseMaxUnavailable(raw)
	switch {
	case !ok:
		v.add(path, fmt.Sprintf("%q is not a count such as 2 or a percentage such as 25%%", raw))
	case pct && n > 100:
		v.add(path, fmt.Sprintf("%q is more than 100%%", raw))
	case !pct && s.GetType() != JobType_JOB_TYPE_DAEMON && s.GetInstances() >= 1 && n > s.GetInstances():
		v.add(path, fmt.Sprintf("%d is more than the job's %d instances", n, s.GetInstances()))
	}
}

// ParseMaxUnavailable reads "2" or "25%".
func ParseMaxUnavailable(s string) (n uint32, percent, ok bool) {
	s = strings.TrimSpace(s)
	percent = strings.HasSuffix(s, "%")
	v, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(s, "%")), 10, 32)
	if err != nil {
		return 0, false, false
	}
	return uint32(v), percent, true
}

// placement checks the per-host and spread limits.
func (v *specChecker) placement(s *JobSpec) {
	if len(s.GetSpread()) > MaxSpreadLimits {
		v.add("spread", fmt.Sprintf("at most %d spread limits", MaxSpreadLimits))
	}
	seen := map[string]int{}
	for i, l := range s.GetSpread() {
		path := fmt.Sprintf("spread[%d]", i)
		if l == nil {
			v.add(path, "must not be empty")
			continue
		}
		if strings.TrimSpace(l.GetLabel()) == "" || hasControl(l.GetLabel()) {
			v.add(joinPath(path, "label"), "is required (a host label such as zone or rack)")
		} else if j, dup := seen[l.GetLabel()]; dup {
			v.add(joinPath(path, "label"), fmt.Sprintf("%q is already limited by spread[%d]", l.GetLabel(), j))
		} else {
			seen[l.GetLabel()] = i
		}
		if l.GetMax() < 1 {
			v.add(joinPath(path, "max"), "must be at least 1")
		}
	}
}
