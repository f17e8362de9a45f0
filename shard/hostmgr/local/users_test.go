package local

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestPickUID(t *testing.T) {
	r := UIDRange{From: 100, To: 104}
	held := func(ids ...uint32) func(uint32) bool {
		return func(id uint32) bool { return slices.Contains(ids, id) }
	}
	cases := []struct {
		name   string
		next   uint32
		inUse  func(uint32) bool
		want   uint32
		wantOK bool
	}{
		{"first free from next", 102, held(), 102, true},
		{"skips held", 102, held(102, 103), 104, true},
		{"wraps around", 104, held(104), 100, true},
		{"wraps past held", 103, held(103, 104, 100), 101, true},
		{"next outside the range starts at its start", 7, held(), 100, true},
		{"all held", 100, held(100, 101, 102, 103, 104), 0, false},
	}
	for _, c := range cases {
		got, ok := pickUID(r, c.next, c.inUse)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: %d %v, want %d %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
	one := UIDRange{From: 5, To: 5}
	if got, ok := pickUID(one, 5, held()); got != 5 || !ok {
		t.Errorf("range of one: %d %v", got, ok)
	}
}

func TestUsersHandOutUniqueUIDsAndTakeBackAdopted(t *testing.T) {
	u, err := newUsers(Config{UIDs: UIDRange{From: 300, To: 302}}, true)
	if err != nil {
		t.Fatal(err)
	}
	u.hold("adopted", &runUser{UID: 301, GID: 301})
	u.hold("foreign", &runUser{UID: 9, GID: 9}) // outside the range: not ours to hold
	a, errA := u.acquire("a")
	b, errB := u.acquire("b")
	if errA != nil || errB != nil || a.UID == b.UID || a.UID == 301 || b.UID == 301 || a.GID != a.UID {
		t.Fatalf("a %+v %v, b %+v %v: want the two free uids, gid = uid", a, errA, b, errB)
	}
	if _, err := u.acquire("c"); err == nil || !strings.Contains(err.Error(), "all 3 uids of 300-302") {
		t.Errorf("full range: %v", err)
	}
	u.release("a", a)
	u.release("b", &runUser{UID: 301}) // not b's: kept
	c, err := u.acquire("c")
	if err != nil || c.UID != a.UID {
		t.Errorf("after a ended: %+v %v, want uid %d", c, err, a.UID)
	}
}

func TestUsersModes(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		canSwitch bool
		want      usersMode
		wantErr   string
	}{
		{"root: a uid per run", Config{}, true, usersDynamic, ""},
		{"not root: the server's user", Config{}, false, usersOff, ""},
		{"a fixed user", Config{User: "65534"}, true, usersFixed, ""},
		{"a fixed user, not root", Config{User: "65534"}, false, usersOff, ""},
		{"root as the fixed user", Config{User: "0"}, true, 0, "is root"},
		{"unknown user", Config{User: "no-such-user-here"}, true, 0, `user "no-such-user-here"`},
		{"range from 0", Config{UIDs: UIDRange{From: 0, To: 10}}, true, 0, "uid 0 is root"},
		{"range backwards", Config{UIDs: UIDRange{From: 10, To: 9}}, true, 0, "ends before it starts"},
	}
	for _, c := range cases {
		u, err := newUsers(c.cfg, c.canSwitch)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case u.mode != c.want:
			t.Errorf("%s: mode %d, want %d", c.name, u.mode, c.want)
		}
	}
}

func TestParseUIDRange(t *testing.T) {
	cases := []struct {
		in      string
		want    UIDRange
		wantErr string
	}{
		{"200000-265535", UIDRange{200000, 265535}, ""},
		{"7-7", UIDRange{7, 7}, ""},
		{"0-100", UIDRange{}, "uid 0 is root"},
		{"9-8", UIDRange{}, "ends before it starts"},
		{"100", UIDRange{}, "not a uid range"},
		{"a-b", UIDRange{}, "not a uid range"},
		{"1-4294967295", UIDRange{}, "not a valid uid"},
		{"1-4294967296", UIDRange{}, "not a uid range"},
	}
	for _, c := range cases {
		got, err := ParseUIDRange(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseCapEff(t *testing.T) {
	status := "Name:\tpeloton\nCapInh:\t0000000000000000\nCapEff:\t00000000000000c3\nCapBnd:\t000001ffffffffff\n"
	caps, err := parseCapEff(status)
	if err != nil || caps != 0xc3 {
		t.Fatalf("caps %x %v", caps, err)
	}
	if caps&switchCaps == switchCaps {
		t.Error("0xc3 lacks CAP_KILL, yet allows switching users")
	}
	if full := uint64(0x1fffeffffff); full&switchCaps != switchCaps {
		t.Error("root's set does not allow switching users")
	}
	if _, err := parseCapEff("Name:\tx\n"); err == nil {
		t.Error("no CapEff line: no error")
	}
}

func TestStatusUIDs(t *testing.T) {
	status := []byte("Name:\tsleep\nState:\tS (sleeping)\nUid:\t200001\t200001\t200001\t200001\nGid:\t5\t5\t5\t5\n")
	if got := statusUIDs(status); !slices.Equal(got, []uint32{200001, 200001, 200001, 200001}) {
		t.Errorf("uids %v", got)
	}
	if got := statusUIDs([]byte("Name:\tx\n")); got != nil {
		t.Errorf("no Uid line: %v", got)
	}
}

func TestPermitted(t *testing.T) {
	const me, mine, other = 200000, 200000, 7
	dir := func(perm fs.FileMode, uid, gid uint32) fileOwner {
		return fileOwner{Mode: fs.ModeDir | perm, UID: uid, GID: gid}
	}
	file := func(perm fs.FileMode, uid, gid uint32) fileOwner { return fileOwner{Mode: perm, UID: uid, GID: gid} }
	cases := []struct {
		name string
		uid  uint32
		f    fileOwner
		bit  fs.FileMode
		want bool
	}{
		{"others may search 0711", me, dir(0o711, 0, 0), 1, true},
		{"others may not list 0711", me, dir(0o711, 0, 0), 4, false},
		{"others may not search 0700", me, dir(0o700, 0, 0), 1, false},
		{"the owner's bits alone count for the owner", me, dir(0o077, me, other), 1, false},
		{"the group's bits for the group", me, dir(0o750, 0, mine), 1, true},
		{"the group's bits, not the others'", me, dir(0o705, 0, mine), 1, false},
		{"root searches anything", 0, dir(0o000, other, other), 1, true},
		{"root reads anything", 0, file(0o000, other, other), 4, true},
		{"root executes a file anyone may", 0, file(0o100, other, other), 1, true},
		{"root does not execute a file nobody may", 0, file(0o644, 0, 0), 1, false},
		{"others execute 0755", me, file(0o755, 0, 0), 1, true},
		{"others do not execute 0750", me, file(0o750, 0, 0), 1, false},
	}
	for _, c := range cases {
		if got := permitted(c.uid, c.uid, c.f, c.bit); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestExecutableBy(t *testing.T) {
	const uid = 200000
	root := fileOwner{Mode: fs.ModeDir | 0o755}
	private := fileOwner{Mode: fs.ModeDir | 0o700}
	traverse := fileOwner{Mode: fs.ModeDir | 0o711}
	tool := fileOwner{Mode: 0o755}
	cases := []struct {
		name string
		file fileOwner
		dirs []fileOwner
		want bool
	}{
		{"/usr/bin/tool", tool, []fileOwner{root, root, root}, true},
		{"through a traverse-only directory", tool, []fileOwner{root, traverse}, true},
		{"below /root (0700)", tool, []fileOwner{root, private, root}, false},
		{"not executable", fileOwner{Mode: 0o644}, []fileOwner{root}, false},
		{"a directory", fileOwner{Mode: fs.ModeDir | 0o755}, []fileOwner{root}, false},
		{"an ancestor that is a file", tool, []fileOwner{root, {Mode: 0o755}}, false},
	}
	for _, c := range cases {
		if got := executableBy(uid, uid, c.file, c.dirs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPathChain(t *testing.T) {
	if got := pathChain("/a/b/"); !slices.Equal(got, []string{"/", "/a", "/a/b"}) {
		t.Errorf("chain %v", got)
	}
	if got := pathChain("/"); !slices.Equal(got, []string{"/"}) {
		t.Errorf("chain of / %v", got)
	}
}

func TestCgroupValues(t *testing.T) {
	for _, c := range []struct {
		milli int64
		want  string
	}{{0, "max 100000"}, {1000, "100000 100000"}, {250, "25000 100000"}, {2500, "250000 100000"}, {1, "1000 100000"}} {
		if got := cpuMax(c.milli); got != c.want {
			t.Errorf("cpuMax(%d) = %q, want %q", c.milli, got, c.want)
		}
	}
	for _, c := range []struct {
		mib  int64
		want string
	}{{0, "max"}, {1, "1048576"}, {512, "536870912"}} {
		if got := memoryMax(c.mib); got != c.want {
			t.Errorf("memoryMax(%d) = %q, want %q", c.mib, got, c.want)
		}
	}
	hybrid := "25 30 0:23 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
	if got := cgroup2Mount(hybrid); got != "/sys/fs/cgroup/unified" {
		t.Errorf("hybrid mount %q", got)
	}
	if got := cgroup2Mount("25 30 0:23 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"); got != "" {
		t.Errorf("v1 only: %q", got)
	}
	if !hasControllers("cpuset cpu io memory pids\n", "cpu", "memory") || hasControllers("", "cpu") || hasControllers("cpuset io", "cpu") {
		t.Error("hasControllers")
	}
	var none *cgroups
	if err := none.remove(model.RunID("x")); err != nil { // a plugin without cgroups removes nothing
		t.Error(err)
	}
}
