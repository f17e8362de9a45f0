package local

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/shard/model"
)

// UIDRange is a range of numeric user ids, both ends included.
type UIDRange struct {
	From, To uint32
}

// DefaultUIDs is where runs get their uid from unless configured: far
// above the ids of /etc/passwd and within what user namespaces map by
// default elsewhere; the gid is the uid, numeric ids need no passwd entry.
var DefaultUIDs = UIDRange{From: 200000, To: 265535}

// Size is how many uids the range holds.
func (r UIDRange) Size() uint64 { return uint64(r.To) - uint64(r.From) + 1 }

func (r UIDRange) String() string { return fmt.Sprintf("%d-%d", r.From, r.To) }

// check returns why r cannot hold the uids of runs, or nil.
func (r UIDRange) check() error {
	switch {
	case r.From == 0:
		return errors.New("uid 0 is root: the range must start above it")
	case r.To < r.From:
		return fmt.Errorf("%d-%d ends before it starts", r.From, r.To)
	case r.To >= 1<<32-1:
		return fmt.Errorf("%d is not a valid uid", r.To)
	}
	return nil
}

// ParseUIDRange reads "FROM-TO", such as "200000-265535".
func ParseUIDRange(s string) (UIDRange, error) {
	from, to, ok := strings.Cut(s, "-")
	f, errF := strconv.ParseUint(from, 10, 32)
	t, errT := strconv.ParseUint(to, 10, 32)
	if !ok || errF != nil || errT != nil {
		return UIDRange{}, fmt.Errorf("%q is not a uid range like %s", s, DefaultUIDs)
	}
	r := UIDRange{From: uint32(f), To: uint32(t)}
	if err := r.check(); err != nil {
		return UIDRange{}, err
	}
	return r, nil
}

// runUser is who a run's command runs as: no supplementary groups.
type runUser struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

// lookupUser resolves Config.User: a user name from the user database
// (its uid and primary group) or a number (its passwd entry's group if it
// has one, else gid = uid). Root is refused.
func lookupUser(name string) (runUser, error) {
	var u *user.User
	var err error
	if _, numErr := strconv.ParseUint(name, 10, 32); numErr == nil {
		if u, err = user.LookupId(name); err != nil {
			u, err = &user.User{Uid: name, Gid: name}, nil
		}
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return runUser{}, fmt.Errorf("user %q: %w", name, err)
	}
	uid, errU := strconv.ParseUint(u.Uid, 10, 32)
	gid, errG := strconv.ParseUint(u.Gid, 10, 32)
	if errU != nil || errG != nil {
		return runUser{}, fmt.Errorf("user %q has no numeric uid and gid (%s:%s)", name, u.Uid, u.Gid)
	}
	if uid == 0 || gid == 0 {
		return runUser{}, fmt.Errorf("user %q is root (uid %d, gid %d): tasks would not be sandboxed", name, uid, gid)
	}
	return runUser{UID: uint32(uid), GID: uint32(gid)}, nil
}

// pickUID returns the first uid of r from next on (wrapping around) that
// inUse does not hold; ok is false when every uid of r is in use.
func pickUID(r UIDRange, next uint32, inUse func(uint32) bool) (uid uint32, ok bool) {
	if next < r.From || next > r.To {
		next = r.From
	}
	size := r.Size()
	for i := uint64(0); i < size; i++ {
		uid := uint32(uint64(r.From) + (uint64(next-r.From)+i)%size)
		if !inUse(uid) {
			return uid, true
		}
	}
	return 0, false
}

// users hands out the users runs run as. Dynamic: a uid of the range per
// run, unique among the runs alive on the host, the next one after the
// last handed out so a uid comes back only after the whole range went
// round. Fixed: every run as one configured user. Off: runs run as the
// server's user (it cannot switch users).
type users struct {
	mode  usersMode
	fixed runUser
	uids  UIDRange
	next  uint32
	held  map[uint32]model.RunID // dynamic uids of runs alive on the host
}

type usersMode int

const (
	usersOff usersMode = iota
	usersDynamic
	usersFixed
)

// newUsers configures who runs run as; canSwitch tells whether this
// process can switch users at all.
func newUsers(cfg Config, canSwitch bool) (*users, error) {
	r := cfg.UIDs
	if r == (UIDRange{}) {
		r = DefaultUIDs
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("%w: UIDs: %v", ErrInvalidConfig, err)
	}
	u := &users{uids: r, held: map[uint32]model.RunID{}}
	switch {
	case cfg.User != "":
		fixed, err := lookupUser(cfg.User)
		if err != nil {
			return nil, fmt.Errorf("%w: User: %v", ErrInvalidConfig, err)
		}
		u.fixed = fixed
		if canSwitch {
			u.mode = usersFixed
		}
	case canSwitch:
		u.mode = usersDynamic
		// Start anywhere in the range, so that a restarted server does not
		// hand out at once the uids its last runs had.
		u.next = r.From + uint32(rand.Uint64N(r.Size()))
	}
	return u, nil
}

// sample is a user runs run as, for checking what they can reach; ok is
// false when runs run as the server's user.
func (u *users) sample() (runUser, bool) {
	switch u.mode {
	case usersDynamic:
		return runUser{UID: u.uids.From, GID: u.uids.From}, true
	case usersFixed:
		return u.fixed, true
	}
	return runUser{}, false
}

// acquire returns the user a new run runs as, nil for the server's user.
// The caller holds the plugin's lock.
func (u *users) acquire(run model.RunID) (*runUser, error) {
	switch u.mode {
	case usersFixed:
		f := u.fixed
		return &f, nil
	case usersDynamic:
		uid, ok := pickUID(u.uids, u.next, func(id uint32) bool { _, held := u.held[id]; return held })
		if !ok {
			return nil, fmt.Errorf("all %d uids of %s are held by runs on this host", u.uids.Size(), u.uids)
		}
		u.held[uid] = run
		u.next = uid + 1
		return &runUser{UID: uid, GID: uid}, nil
	}
	return nil, nil
}

// hold records the uid of a run adopted after a restart; the caller holds
// the plugin's lock.
func (u *users) hold(run model.RunID, ru *runUser) {
	if u.mode == usersDynamic && ru != nil && ru.UID >= u.uids.From && ru.UID <= u.uids.To {
		u.held[ru.UID] = run
	}
}

// release frees the uid of a run that ended; the caller holds the
// plugin's lock.
func (u *users) release(run model.RunID, ru *runUser) {
	if ru != nil && u.held[ru.UID] == run {
		delete(u.held, ru.UID)
	}
}

// Capabilities (capabilities(7)) a process needs to run tasks as other
// users: chown their sandboxes and volumes, reach their files, signal
// them, and switch to their gid and uid.
const (
	capChown       = 0
	capDacOverride = 1
	capKill        = 5
	capSetgid      = 6
	capSetuid      = 7

	switchCaps = 1<<capChown | 1<<capDacOverride | 1<<capKill | 1<<capSetgid | 1<<capSetuid
)

// parseCapEff reads the effective capability set from the text of
// /proc/<pid>/status.
func parseCapEff(status string) (uint64, error) {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff line")
}

// canSwitchUsers reports whether this process may run commands as other
// users; a variable so tests can pretend it may not.
var canSwitchUsers = func() bool {
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		if caps, err := parseCapEff(string(data)); err == nil {
			return caps&switchCaps == switchCaps
		}
	}
	return os.Geteuid() == 0
}
