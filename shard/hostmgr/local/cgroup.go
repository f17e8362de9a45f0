package local

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/peloton-federated/peloton/shard/model"
)

// cpuPeriodMicros is the period of cpu.max: a task's millicores are its
// quota per 100ms.
const cpuPeriodMicros = 100000

// minCPUQuotaMicros is the smallest quota the kernel takes.
const minCPUQuotaMicros = 1000

// errNoCgroups says the kernel offers no cgroup v2 limits to this process.
var errNoCgroups = errors.New("cgroup v2 cpu/memory controllers not available")

// cpuMax is the cpu.max of a task given millicores: "<quota> <period>" in
// microseconds, 1000 millicores being one CPU's time; no cpu is "max".
func cpuMax(milli int64) string {
	if milli <= 0 {
		return "max " + strconv.Itoa(cpuPeriodMicros)
	}
	quota := max(milli*cpuPeriodMicros/1000, minCPUQuotaMicros)
	return strconv.FormatInt(quota, 10) + " " + strconv.Itoa(cpuPeriodMicros)
}

// memoryMax is the memory.max of a task given MiB, in bytes; no memory is
// "max".
func memoryMax(mib int64) string {
	if mib <= 0 {
		return "max"
	}
	return strconv.FormatInt(mib<<20, 10)
}

// cgroup2Mount returns where a cgroup v2 hierarchy is mounted, from the
// text of /proc/self/mountinfo, or "".
func cgroup2Mount(mountinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - type source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, typ := strings.Fields(pre), strings.Fields(post)
		if ok && len(fields) >= 5 && len(typ) > 0 && typ[0] == "cgroup2" {
			return fields[4]
		}
	}
	return ""
}

// hasControllers reports whether a cgroup.controllers text lists every
// one of want.
func hasControllers(text string, want ...string) bool {
	have := strings.Fields(text)
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// cgroups puts each run in its own cgroup below parent with the task's
// cpu and memory as limits.
type cgroups struct {
	parent string
}

// openCgroups finds a writable cgroup v2 hierarchy offering the cpu and
// memory controllers and makes the group of this plugin's runs (named
// after its directory, so two servers on a machine do not share one).
// The error wraps errNoCgroups.
func openCgroups(dir string) (*cgroups, error) {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoCgroups, err)
	}
	mount := cgroup2Mount(string(info))
	if mount == "" {
		return nil, fmt.Errorf("%w: no cgroup2 hierarchy is mounted", errNoCgroups)
	}
	controllers, err := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if err != nil || !hasControllers(string(controllers), "cpu", "memory") {
		return nil, fmt.Errorf("%w: %s does not offer both", errNoCgroups, mount)
	}
	sum := sha256.Sum256([]byte(dir))
	parent := filepath.Join(mount, "peloton-"+hex.EncodeToString(sum[:6]))
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: %v", errNoCgroups, err)
	}
	for _, d := range []string{mount, parent} {
		if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+cpu +memory"), 0o644); err != nil {
			return nil, fmt.Errorf("%w: enabling cpu and memory in %s: %v", errNoCgroups, d, err)
		}
	}
	return &cgroups{parent: parent}, nil
}

// create makes a run's cgroup with its limits and returns its path.
func (c *cgroups) create(run model.RunID, r model.Resources) (string, error) {
	dir := filepath.Join(c.parent, pathElement(run))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("creating cgroup: %w", err)
	}
	for file, value := range map[string]string{"cpu.max": cpuMax(r.MilliCPU), "memory.max": memoryMax(r.MemMB)} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
			_ = removeCgroup(dir)
			return "", fmt.Errorf("setting %s of cgroup: %w", file, err)
		}
	}
	return dir, nil
}

// remove deletes a run's cgroup, if it has one and it is empty.
func (c *cgroups) remove(run model.RunID) error {
	if c == nil {
		return nil
	}
	return removeCgroup(filepath.Join(c.parent, pathElement(run)))
}

// killCgroup kills every process left in a cgroup (cgroup.kill, Linux
// 5.14 on) and removes it.
func killCgroup(dir string) error {
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644)
	return removeCgroup(dir)
}

// removeCgroup removes a cgroup directory; a cgroup is removed with
// rmdir, its files go with it. A missing one is not an error; a busy one
// (its processes still exiting) is left to the plugin's removal when the
// run's end is reported.
func removeCgroup(dir string) error {
	err := syscall.Rmdir(dir)
	if err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.EBUSY) {
		return fmt.Errorf("removing cgroup %s: %w", dir, err)
	}
	return nil
}

// openCgroupFD opens a cgroup for SysProcAttr.CgroupFD.
func openCgroupFD(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening cgroup: %w", err)
	}
	return f, nil
}
