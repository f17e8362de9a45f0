package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/peloton-federated/peloton/shard/hostmgr"
)

// Modes of what the plugin writes. A directory a task must pass through
// to reach its sandbox or volume is "traverse only": others may search it
// but not list it, so a task reaches only paths it knows, and every file
// it could name there is the server's and 0600. Everything else is the
// server's alone, or the run's user's alone.
const (
	traverseDirMode fs.FileMode = 0o711 // Dir, runs/, runs/<id>/, volumes/
	privateDirMode  fs.FileMode = 0o700 // sandbox/ and volumes/<id>/, the run's user's
	privateFileMode fs.FileMode = 0o600
)

// Sandboxed reports whether tasks run as users other than this process's
// own (Config.User), so that they cannot reach its files.
func (p *Plugin) Sandboxed() bool { return p.users.mode != usersOff }

// newIsolation decides who runs run as and prepares the runs directory
// for them. It returns the directory that holds the runs and volumes: Dir,
// or, when a directory above Dir is out of the task users' reach (a data
// directory under /root, or in a private temporary directory), a
// directory of this process's own below the system's temporary directory,
// named by Dir, so that a restart finds its runs again.
func newIsolation(cfg Config) (u *users, workDir, runs string, err error) {
	u, err = newUsers(cfg, canSwitchUsers())
	if err != nil {
		return nil, "", "", err
	}
	runs, err = makeRunsDir(cfg.Dir, cfg.TraverseFrom, u)
	if !errors.Is(err, errNotReachable) {
		return u, cfg.Dir, runs, err
	}
	root := filepath.Join(os.TempDir(), "peloton-tasks")
	if rerr := ownDir(root); rerr != nil {
		return nil, "", "", fmt.Errorf("%w (and its stand-in %s: %w)", err, root, rerr)
	}
	workDir = filepath.Join(root, fallbackName(cfg.Dir))
	runs, err = makeRunsDir(workDir, root, u)
	return u, workDir, runs, err
}

// fallbackName names the stand-in directory of dir.
func fallbackName(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:8])
}

// ownDir makes dir, traverse-only, or checks that the dir there is a
// directory (not a link) of this process's user: in a directory every
// user may write to, another user could have made it first.
func ownDir(dir string) error {
	if err := os.Mkdir(dir, traverseDirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not a directory of this process's user", dir)
	}
	return os.Chmod(dir, traverseDirMode)
}

// makeRunsDir creates Dir/runs and makes every directory from top (Dir
// when empty or when tasks are not sandboxed) down to it traverse-only,
// then checks that the users tasks
// run as can reach it, so that a sandbox below is theirs to enter; it
// returns the runs directory.
func makeRunsDir(dir, top string, u *users) (string, error) {
	runs := filepath.Join(dir, "runs")
	sample, sandboxed := u.sample()
	if top == "" || !sandboxed {
		// Tasks that run as this process's user need no way in.
		top = dir
	}
	top, err := filepath.Abs(top)
	if err != nil {
		return "", fmt.Errorf("%w: TraverseFrom: %w", ErrInvalidConfig, err)
	}
	rel, err := filepath.Rel(top, runs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: TraverseFrom %s does not hold Dir %s", ErrInvalidConfig, top, dir)
	}
	if err := os.MkdirAll(runs, traverseDirMode); err != nil {
		return "", err
	}
	for d := runs; ; d = filepath.Dir(d) {
		if err := os.Chmod(d, traverseDirMode); err != nil {
			return "", err
		}
		if d == top {
			break
		}
	}
	if sandboxed {
		if err := checkReachable(sample.UID, sample.GID, runs); err != nil {
			return "", fmt.Errorf("%w: Dir: %w", ErrInvalidConfig, err)
		}
	}
	return runs, nil
}

// makeRunDir creates a run's directory, traverse-only; the error wraps
// fs.ErrExist when it exists.
func makeRunDir(dir string) error {
	if err := os.Mkdir(dir, traverseDirMode); err != nil {
		return err
	}
	// Mkdir's mode is cut by the umask; this one is the mode meant.
	return os.Chmod(dir, traverseDirMode)
}

// chownTo gives path (not what a link points to) to the run's user; nil
// leaves it this process's.
func chownTo(path string, u *runUser) error {
	if u == nil {
		return nil
	}
	return os.Lchown(path, int(u.UID), int(u.GID))
}

// chownTree gives dir and everything below it to the run's user, links
// themselves and never what they point to.
func chownTree(dir string, u *runUser) error {
	if u == nil {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(u.UID), int(u.GID))
	})
}

// executorArgs are the arguments of a run's executor: its directory, the
// pipe that says when the command runs, its probes, who the command runs
// as and the cgroup holding its limits.
func (p *Plugin) executorArgs(l hostmgr.Launch, dir string, probed bool, user *runUser) ([]string, error) {
	args := []string{ExecutorCommand, "--dir", dir, "--notify-fd", "3"}
	if probed {
		args = append(args, "--probes", filepath.Join(dir, probesFile))
	}
	if user != nil {
		args = append(args, "--user", strconv.FormatUint(uint64(user.UID), 10)+":"+strconv.FormatUint(uint64(user.GID), 10))
		// users.mode never changes after New.
		if p.users.mode == usersDynamic {
			args = append(args, "--own-uid")
		}
	}
	if p.cgroups != nil {
		cg, err := p.cgroups.create(l.Run, l.Task.Resources)
		if err != nil {
			return nil, err
		}
		args = append(args, "--cgroup", cg)
	}
	return append(append(args, "--", l.Task.Command), l.Task.Args...), nil
}

// setUpIsolation finds the cgroup hierarchy limits are set in and logs,
// once, how tasks are isolated and what is not enforced.
func (p *Plugin) setUpIsolation() {
	switch p.users.mode {
	case usersDynamic:
		p.log.Info("tasks run sandboxed, each run as its own uid", "uids", p.users.uids.String())
	case usersFixed:
		p.log.Info("tasks run sandboxed as one user: they can reach each other's files", "user", p.cfg.User, "uid", p.users.fixed.UID, "gid", p.users.fixed.GID)
	default:
		p.log.Warn("tasks are not sandboxed: this process cannot switch users (it is not root and lacks CAP_SETUID), so tasks run as its own user and can read whatever it can")
	}
	cg, err := openCgroups(p.cfg.Dir)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, errNoCgroups) {
			msg = errNoCgroups.Error() + ": task resources are not enforced"
		}
		p.log.Warn(msg, "why", err)
		return
	}
	p.cgroups = cg
	p.log.Info("task cpu and memory are enforced with cgroup v2", "cgroup", cg.parent)
}
