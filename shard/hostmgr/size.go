package hostmgr

import (
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
)

// Oversize says why a task asking for r can run on none of the host
// shapes a region knows: the resource (cpu, mem_mb, disk_mb, gpu, or ""
// when every amount fits some host but no host has them all) and a
// message. It returns ok when some shape holds r, or when no host is known
// yet (a region that is starting cannot tell).
func Oversize(r model.Resources, shapes []model.Resources) (field, msg string, ok bool) {
	if len(shapes) == 0 {
		return "", "", true
	}
	var largest model.Resources
	for _, s := range shapes {
		if r.Fits(s) {
			return "", "", true
		}
		largest = largest.Max(s)
	}
	switch {
	case r.MilliCPU > largest.MilliCPU:
		return "cpu", fmt.Sprintf("%s cores is larger than any host: the largest has %s cores", model.FormatMilli(r.MilliCPU), model.FormatMilli(largest.MilliCPU)), false
	case r.MemMB > largest.MemMB:
		return "mem_mb", fmt.Sprintf("%d MiB is larger than any host: the largest has %d MiB", r.MemMB, largest.MemMB), false
	case r.DiskMB > largest.DiskMB:
		return "disk_mb", fmt.Sprintf("%d MiB is larger than any host: the largest has %d MiB", r.DiskMB, largest.DiskMB), false
	case r.GPU > largest.GPU:
		return "gpu", fmt.Sprintf("%d GPUs is more than any host has: the most a host has is %d", r.GPU, largest.GPU), false
	}
	return "", fmt.Sprintf("no host has all of %s at once (each amount fits some host, none fits all)", r), false
}
