package testkit

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func TestFreePortsAreReservedOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := reservableRange()
	eLo, eHi, err := ephemeralRange()
	if err != nil {
		t.Skip(err)
	}
	seen := map[int]bool{}
	for range 20 {
		first := FreePorts(t, "127.0.0.1", 3)
		for p := first; p < first+3; p++ {
			if p < lo || p >= hi || (p >= eLo && p <= eHi) {
				t.Errorf("port %d is outside [%d, %d) or inside the ephemeral range %d-%d", p, lo, hi, eLo, eHi)
			}
			if seen[p] {
				t.Errorf("port %d handed out twice", p)
			}
			seen[p] = true
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				t.Errorf("port %d handed out is not free: %v", p, err)
				continue
			}
			l.Close()
		}
	}
	// Its lock file is held: another process cannot take the port.
	p := FreePort(t, "127.0.0.1")
	f, err := os.Open(filepath.Join(os.TempDir(), "peloton-test-ports", strconv.Itoa(p)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Errorf("the lock of port %d could be taken again", p)
	}
}

func TestDevRegions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--hosts", "sim"}, 1},
		{[]string{"--regions", "3", "--hosts", "sim"}, 3},
		{[]string{"--regions=2"}, 2},
		{[]string{"--regions", "a,b"}, 2},
		{[]string{"--regions=east, west, central"}, 3},
	} {
		if got := devRegions(c.args); got != c.want {
			t.Errorf("devRegions(%q) = %d, want %d", c.args, got, c.want)
		}
	}
}
