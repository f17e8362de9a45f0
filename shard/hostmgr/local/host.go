package local

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"github.com/peloton-federated/peloton/shard/model"
)

// HostKind is the Kind of the host the local plugin reports.
const HostKind = "local"

// describeHost measures this machine: CPUs, memory from /proc/meminfo and
// the space available to unprivileged users on the file system of dir.
func describeHost(cluster, hostname, dir string) (model.Host, error) {
	memMB, err := memTotalMB("/proc/meminfo")
	if err != nil {
		return model.Host{}, err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return model.Host{}, fmt.Errorf("statfs %s: %w", dir, err)
	}
	diskMB := float64(fs.Bavail) * float64(fs.Bsize) / (1 << 20)
	return model.Host{
		ID:       model.HostID(cluster + "/" + hostname),
		Hostname: hostname,
		Cluster:  cluster,
		Kind:     HostKind,
		State:    model.HostUp,
		Capacity: model.Resources{
			CPU:    float64(runtime.NumCPU()),
			MemMB:  memMB,
			DiskMB: float64(int64(diskMB)),
		},
		Labels: map[string]string{
			"hostname": hostname,
			"os":       runtime.GOOS,
			"arch":     runtime.GOARCH,
		},
	}, nil
}

// memTotalMB reads MemTotal (in KiB) from a meminfo file and returns MiB.
func memTotalMB(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseMemTotalMB(data)
}

func parseMemTotalMB(meminfo []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 2 || string(fields[0]) != "MemTotal:" {
			continue
		}
		kib, err := strconv.ParseUint(string(fields[1]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("meminfo MemTotal %q: %w", fields[1], err)
		}
		if len(fields) >= 3 && string(fields[2]) != "kB" {
			return 0, fmt.Errorf("meminfo MemTotal: unknown unit %q", fields[2])
		}
		return float64(kib / 1024), nil
	}
	return 0, fmt.Errorf("meminfo: %w", errNoMemTotal)
}

// checkPortRanges returns why host port ranges are unusable: empty,
// reversed, outside 1..65535 or overlapping.
func checkPortRanges(ranges []model.PortRange) error {
	if len(ranges) == 0 {
		return fmt.Errorf("no port range")
	}
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(a, b model.PortRange) int { return cmp.Compare(a.From, b.From) })
	for i, r := range sorted {
		switch {
		case r.From == 0 || r.To > 65535:
			return fmt.Errorf("range %d-%d is outside 1-65535", r.From, r.To)
		case r.To < r.From:
			return fmt.Errorf("range %d-%d ends before it starts", r.From, r.To)
		case i > 0 && r.From <= sorted[i-1].To:
			return fmt.Errorf("ranges %d-%d and %d-%d overlap", sorted[i-1].From, sorted[i-1].To, r.From, r.To)
		}
	}
	return nil
}
