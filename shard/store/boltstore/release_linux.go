package boltstore

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReleaseMemory drops this process's mapping of the data file's pages: the
// store reads the file through a read-only shared mapping, and every page a
// big job's transactions read stays counted in the process's resident set
// until the system needs the memory. MADV_DONTNEED drops the mapping's
// pages; they stay in the page cache and are mapped again when read, so
// nothing is lost and the next reads cost a minor fault each. A read
// transaction is held meanwhile: the store does not map the file anew (as
// it does when the file grows) while it is open.
func (s *Store) ReleaseMemory() error {
	tx, err := s.db.Begin(false)
	if err != nil {
		return fmt.Errorf("release memory: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	start := s.db.Info().Data
	size, err := mappingSize(start)
	if err != nil || size == 0 {
		return err
	}
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, size, unix.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("release memory: madvise: %w", errno)
	}
	return nil
}

// mappingSize finds the size of the mapping that starts at addr in
// /proc/self/maps (0 when there is none).
func mappingSize(addr uintptr) (uintptr, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("release memory: %w", err)
	}
	defer f.Close()
	prefix := strconv.FormatUint(uint64(addr), 16) + "-"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		rng, _, _ := strings.Cut(line, " ")
		_, endHex, _ := strings.Cut(rng, "-")
		end, err := strconv.ParseUint(endHex, 16, 64)
		if err != nil || uintptr(end) <= addr {
			return 0, fmt.Errorf("release memory: /proc/self/maps: %q", line)
		}
		return uintptr(end) - addr, nil
	}
	return 0, sc.Err()
}
