package testkit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Ports a test hands to a server are reserved, not just found free:
//
//   - they lie outside the kernel's ephemeral range
//     (net.ipv4.ip_local_port_range), so no socket bound to port 0 and no
//     outgoing connection is given one of them — not the gossip port a
//     `peloton dev` binds for itself, not another test's client;
//   - a port is handed out once per test process, and held against the
//     other test processes of the machine by a lock file
//     (os.TempDir()/peloton-test-ports/PORT) that the kernel releases when
//     the process ends, however it ends;
//   - it is free for TCP and UDP (gossip listens on both) on every address
//     it is asked for when it is handed out.
//
// A run of consecutive ports (`peloton dev --regions N` listens on the port
// and the N-1 after it) is reserved as a whole.

// FreePort returns a port reserved for the test process and free on ip.
func FreePort(t testing.TB, ip string) int {
	t.Helper()
	return FreePorts(t, ip, 1)
}

// FreeAddr returns a reserved, free 127.0.0.1 address.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t, "127.0.0.1")))
}

// FreePorts returns the first of n consecutive ports, each reserved and
// free on ip.
func FreePorts(t testing.TB, ip string, n int) int {
	t.Helper()
	port, err := reservePorts([]string{ip}, n)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// FreePortOn returns a reserved port that is free on every one of ips.
func FreePortOn(t testing.TB, ips ...string) int {
	t.Helper()
	port, err := reservePorts(ips, 1)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// reserved holds the lock file of every port this process handed out.
var reserved struct {
	mu    sync.Mutex
	locks map[int]*os.File
}

func reservePorts(ips []string, n int) (int, error) {
	if n < 1 || len(ips) == 0 {
		return 0, fmt.Errorf("testkit: %d ports on %v", n, ips)
	}
	lo, hi := reservableRange()
	if hi-lo < n {
		return 0, fmt.Errorf("testkit: no range of ports outside the ephemeral one to reserve from")
	}
	dir := filepath.Join(os.TempDir(), "peloton-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, fmt.Errorf("testkit: port locks: %w", err)
	}
	_ = os.Chmod(dir, 0o777|os.ModeSticky) // shared by every user's tests
	reserved.mu.Lock()
	defer reserved.mu.Unlock()
	if reserved.locks == nil {
		reserved.locks = map[int]*os.File{}
	}
	span := hi - lo - n + 1
	start := rand.IntN(span)
	for i := range span {
		first := lo + (start+i)%span
		if locks, ok := lockRun(dir, first, n, ips); ok {
			for j, f := range locks {
				reserved.locks[first+j] = f
			}
			return first, nil
		}
	}
	return 0, fmt.Errorf("testkit: no %d consecutive ports free on %s in %d-%d", n, strings.Join(ips, ", "), lo, hi-1)
}

// lockRun locks ports first..first+n-1 if each is neither reserved nor
// in use; it releases what it locked when one is.
func lockRun(dir string, first, n int, ips []string) ([]*os.File, bool) {
	var locks []*os.File
	for p := first; p < first+n; p++ {
		f, ok := lockPort(dir, p)
		if ok && !bindable(p, ips) {
			f.Close()
			ok = false
		}
		if !ok {
			for _, l := range locks {
				l.Close()
			}
			return nil, false
		}
		locks = append(locks, f)
	}
	return locks, true
}

// lockPort takes the port's lock file, unless this process or another
// holds it.
func lockPort(dir string, port int) (*os.File, bool) {
	if _, mine := reserved.locks[port]; mine {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// bindable reports whether port is free for TCP and UDP on every ip.
func bindable(port int, ips []string) bool {
	for _, ip := range ips {
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		l.Close()
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		pc.Close()
	}
	return true
}

// reservableRange is [lo, hi): the ports from 10000 up to the kernel's
// ephemeral range, or above it when it starts too low to leave room.
func reservableRange() (lo, hi int) {
	eLo, eHi, err := ephemeralRange()
	if err != nil {
		eLo, eHi = 32768, 60999 // Linux's default
	}
	const floor, room = 10000, 2000
	if eLo-floor >= room {
		return floor, eLo
	}
	if 65536-(eHi+1) >= room {
		return eHi + 1, 65536
	}
	return 0, 0
}

func ephemeralRange() (int, int, error) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(raw))
	if len(f) != 2 {
		return 0, 0, errors.New("ip_local_port_range: " + string(raw))
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, errors.New("ip_local_port_range: " + string(raw))
	}
	return lo, hi, nil
}
