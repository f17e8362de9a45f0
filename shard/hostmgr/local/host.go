package local

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
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
	diskMB := int64(fs.Bavail * uint64(fs.Bsize) >> 20)
	return model.Host{
		ID:       model.HostID(cluster + "/" + hostname),
		Hostname: hostname,
		Cluster:  cluster,
		Kind:     HostKind,
		State:    model.HostUp,
		Capacity: model.Resources{
			MilliCPU: int64(runtime.NumCPU()) * model.MilliPerCore,
			MemMB:    memMB,
			DiskMB:   diskMB,
		},
		Labels: map[string]string{
			"hostname": hostname,
			"os":       runtime.GOOS,
			"arch":     runtime.GOARCH,
		},
	}, nil
}

// memTotalMB reads MemTotal (in KiB) from a meminfo file and returns MiB.
func memTotalMB(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseMemTotalMB(data)
}

func parseMemTotalMB(meminfo []byte) (int64, error) {
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
		return int64(kib / 1024), nil
	}
	return 0, fmt.Errorf("meminfo: %w", errNoMemTotal)
}
