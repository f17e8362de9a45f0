package local

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// confinement is how the executor confines a run's command and its
// command probes: the user they run as, whether that uid is the run's
// alone, and the cgroup holding their limits. The zero value confines
// nothing: the command runs as the executor's user.
type confinement struct {
	user      *runUser
	ownUID    bool     // the uid is the run's alone: its every process ends with the run
	cgroup    *os.File // the run's cgroup, for SysProcAttr.CgroupFD; nil without one
	cgroupDir string
	ended     bool
}

// newConfinement confines as the executor's options say, opening the
// run's cgroup if it has one.
func newConfinement(opts executorOptions) (*confinement, error) {
	c := &confinement{user: opts.user, ownUID: opts.ownUID, cgroupDir: opts.cgroup}
	if opts.cgroup != "" {
		f, err := openCgroupFD(opts.cgroup)
		if err != nil {
			return nil, err
		}
		c.cgroup = f
	}
	return c, nil
}

// prctlSetNoNewPrivs is PR_SET_NO_NEW_PRIVS of prctl(2).
const prctlSetNoNewPrivs = 38

// parseRunUser reads the --user value of the executor, "UID:GID".
func parseRunUser(s string) (runUser, error) {
	u, g, ok := strings.Cut(s, ":")
	uid, errU := strconv.ParseUint(u, 10, 32)
	gid, errG := strconv.ParseUint(g, 10, 32)
	if !ok || errU != nil || errG != nil {
		return runUser{}, fmt.Errorf("%q is not UID:GID", s)
	}
	return runUser{UID: uint32(uid), GID: uint32(gid)}, nil
}

// command makes the command (or a command probe) to run confined: in its
// own process group, as the run's user with no supplementary groups, in
// the run's cgroup, the program found on PATH as that user would find it.
func (c *confinement) command(cmd *exec.Cmd, name string) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if c.user != nil {
		attr.Credential = &syscall.Credential{Uid: c.user.UID, Gid: c.user.GID, Groups: []uint32{}}
		if !strings.Contains(name, "/") {
			cmd.Path, cmd.Err = lookPathAs(name, os.Getenv("PATH"), c.user.UID, c.user.GID)
		}
	}
	if c.cgroup != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, int(c.cgroup.Fd())
	}
	cmd.SysProcAttr = attr
}

// start starts a confined command with no_new_privs set, so neither it
// nor anything it runs gains privileges through a set-uid program or file
// capabilities. The flag is inherited from the thread that forks, so the
// goroutine keeps its thread from setting it until the fork; the thread
// keeps the flag, which the executor never needs otherwise.
func (c *confinement) start(cmd *exec.Cmd) error {
	if c.user == nil {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prctlSetNoNewPrivs, 1, 0); errno != 0 {
		return fmt.Errorf("setting no_new_privs: %w", errno)
	}
	return cmd.Start()
}

// end cleans up after the command ended: what is left of its processes
// goes (those of its uid when the uid is the run's alone, those of its
// cgroup), and its sandbox goes back to the executor's user, so that a
// later run given the same uid cannot enter it. Only the first call does
// anything.
func (c *confinement) end(sandbox string) {
	if c.ended {
		return
	}
	c.ended = true
	if c.user != nil && c.ownUID {
		killUser(c.user.UID)
	}
	if c.cgroup != nil {
		c.cgroup.Close()
		if err := killCgroup(c.cgroupDir); err != nil {
			fmt.Fprintf(os.Stderr, "peloton executor: %v\n", err)
		}
	}
	if c.user != nil {
		if err := os.Lchown(sandbox, os.Getuid(), os.Getgid()); err != nil {
			fmt.Fprintf(os.Stderr, "peloton executor: locking the sandbox: %v\n", err)
		}
	}
}

// statusUIDs returns the real, effective, saved and filesystem uids of
// the text of /proc/<pid>/status.
func statusUIDs(status []byte) []uint32 {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Uid:")
		if !ok {
			continue
		}
		var out []uint32
		for _, f := range strings.Fields(rest) {
			if n, err := strconv.ParseUint(f, 10, 32); err == nil {
				out = append(out, uint32(n))
			}
		}
		return out
	}
	return nil
}

// killUser kills every process running with uid, again until none is
// left (one may fork while the others are killed), for at most a few
// rounds.
func killUser(uid uint32) {
	for round := 0; round < 10; round++ {
		if killed := signalUser(uid, syscall.SIGKILL); killed == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// signalUser sends sig to every live process with uid among its uids and
// returns how many it signalled.
func signalUser(uid uint32, sig syscall.Signal) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || bytes.Contains(status, []byte("\nState:\tZ")) {
			continue
		}
		for _, u := range statusUIDs(status) {
			if u == uid {
				if err := syscall.Kill(pid, sig); err == nil || !errors.Is(err, syscall.ESRCH) {
					n++
				}
				break
			}
		}
	}
	return n
}
