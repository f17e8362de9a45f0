package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// fileOwner is what deciding access needs of a file or directory: its
// permission bits, owner and group.
type fileOwner struct {
	Mode     fs.FileMode
	UID, GID uint32
}

// ownerOf returns the fileOwner of a stat result.
func ownerOf(info fs.FileInfo) fileOwner {
	o := fileOwner{Mode: info.Mode()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		o.UID, o.GID = st.Uid, st.Gid
	}
	return o
}

// permitted reports whether a process of uid and gid (and no supplementary
// groups) has the permission bit (4 read, 2 write, 1 execute or search) on
// f, by the class Unix checks: the owner's bits if it owns f, else the
// group's if f is of its group, else the others'. Root has read and write
// always, and execute when anyone has it (search on directories always).
func permitted(uid, gid uint32, f fileOwner, bit fs.FileMode) bool {
	perm := f.Mode.Perm()
	if uid == 0 {
		if bit != 1 || f.Mode.IsDir() {
			return true
		}
		return perm&0o111 != 0
	}
	switch {
	case f.UID == uid:
		return perm&(bit<<6) != 0
	case f.GID == gid:
		return perm&(bit<<3) != 0
	default:
		return perm&bit != 0
	}
}

// executableBy reports whether uid and gid may execute file, whose
// directories from the root down are dirs: each must be a directory they
// may search, and the file a regular file they may execute.
func executableBy(uid, gid uint32, file fileOwner, dirs []fileOwner) bool {
	for _, d := range dirs {
		if !d.Mode.IsDir() || !permitted(uid, gid, d, 1) {
			return false
		}
	}
	return file.Mode.IsRegular() && permitted(uid, gid, file, 1)
}

// reachableBy returns the first directory of dir's path, from the root
// down, that uid and gid may not search, or "" when they reach dir.
func reachableBy(uid, gid uint32, dir string) (string, error) {
	for _, d := range pathChain(dir) {
		info, err := os.Stat(d)
		if err != nil {
			return "", err
		}
		if !info.IsDir() || !permitted(uid, gid, ownerOf(info), 1) {
			return d, nil
		}
	}
	return "", nil
}

// pathChain is every directory from the root down to path itself: for
// /a/b, "/", "/a" and "/a/b".
func pathChain(path string) []string {
	path = filepath.Clean(path)
	var out []string
	for p := path; ; p = filepath.Dir(p) {
		out = append(out, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// canExecute reports whether uid and gid may execute path: along the path
// as written (stat follows links) and along the path with its links
// resolved.
func canExecute(uid, gid uint32, path string) bool {
	paths := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return false
		}
		chain := pathChain(filepath.Dir(p))
		dirs := make([]fileOwner, 0, len(chain))
		for _, d := range chain {
			di, err := os.Stat(d)
			if err != nil {
				return false
			}
			dirs = append(dirs, ownerOf(di))
		}
		if !executableBy(uid, gid, ownerOf(info), dirs) {
			return false
		}
	}
	return true
}

// lookPathAs finds a command on pathList as a process of uid and gid
// would: an entry it cannot search or a file it cannot execute is
// skipped, so a PATH holding a directory of the server's user that the
// task's user cannot reach finds the next match. A name holding a '/' is
// not looked up; relative entries are skipped. The error wraps
// exec.ErrNotFound.
func lookPathAs(name, pathList string, uid, gid uint32) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			// An empty or relative entry would be found from the working
			// directory; exec.LookPath refuses those too (exec.ErrDot).
			continue
		}
		path := filepath.Join(dir, name)
		if canExecute(uid, gid, path) {
			return path, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// errNotReachable says the sandboxes are out of the tasks' reach.
var errNotReachable = errors.New("not searchable by task users")

// checkReachable returns an error naming the first directory above dir
// that uid and gid cannot search.
func checkReachable(uid, gid uint32, dir string) error {
	blocked, err := reachableBy(uid, gid, dir)
	if err != nil {
		return err
	}
	if blocked == "" {
		return nil
	}
	mode := fs.FileMode(0)
	if info, err := os.Stat(blocked); err == nil {
		mode = info.Mode().Perm()
	}
	return fmt.Errorf("%s (mode %04o) is %w (uid %d): tasks could not reach their sandboxes below %s; make it searchable (chmod o+x) or use another data directory",
		blocked, uint32(mode), errNotReachable, uid, dir)
}
