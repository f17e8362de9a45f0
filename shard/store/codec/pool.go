package codec

import (
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
)

// resources writes the four amounts as signed varints of their integer
// units (millicores, MiB, MiB, devices); model.Unlimited is the largest
// int64 and comes back exactly.
func (e *encoder) resources(r model.Resources) {
	e.varint(r.MilliCPU)
	e.varint(r.MemMB)
	e.varint(r.DiskMB)
	e.varint(r.GPU)
}

func (d *decoder) resources() model.Resources {
	var r model.Resources
	r.MilliCPU = d.varint()
	r.MemMB = d.varint()
	r.DiskMB = d.varint()
	r.GPU = d.varint()
	return r
}

// decimalResources writes amounts as the records before integer units had
// them: four raw IEEE 754 doubles, cpu in cores, +Inf for Unlimited. Only
// tests write it, to make records as older builds did.
func (e *encoder) decimalResources(r model.Resources) {
	e.float(r.Cores())
	e.float(model.UnitsToDecimal(r.MemMB))
	e.float(model.UnitsToDecimal(r.DiskMB))
	e.float(model.UnitsToDecimal(r.GPU))
}

// decimalResources reads amounts of an older record (see the encoder's),
// rounding to the nearest unit as every edge does (model.ResourcesFromDecimal).
func (d *decoder) decimalResources() model.Resources {
	cpu, mem, disk, gpu := d.float(), d.float(), d.float(), d.float()
	return model.ResourcesFromDecimal(cpu, mem, disk, gpu)
}

// shares writes the four weights as raw IEEE 754 bits, as every pool record
// version has them.
func (e *encoder) shares(s model.Shares) {
	e.float(s.CPU)
	e.float(s.Mem)
	e.float(s.Disk)
	e.float(s.GPU)
}

func (d *decoder) shares() model.Shares {
	return model.Shares{CPU: d.float(), Mem: d.float(), Disk: d.float(), GPU: d.float()}
}

// EncodePool returns the stored form of p at revision rev. The path is the
// key and is not repeated in the value.
func EncodePool(p *model.Pool, rev uint64) []byte {
	return encodePool(p, rev, PoolRecordVersion)
}

// encodePool writes a pool in the given record version (only tests write
// older ones, to make records as older builds did).
func encodePool(p *model.Pool, rev uint64, version byte) []byte {
	e := encoder{buf: make([]byte, 0, 2+10+3*32+14)}
	e.byte(version)
	e.uvarint(rev)
	if version >= PoolRecordV2 {
		e.resources(p.Reservation)
		e.resources(p.Limit)
	} else {
		e.decimalResources(p.Reservation)
		e.decimalResources(p.Limit)
	}
	e.shares(p.Share)
	e.time(p.CreateTime)
	if version >= PoolRecordV3 {
		e.strings(p.HostPools)
	}
	if version >= PoolRecordV4 {
		e.clusterPolicy(p.Clusters)
	}
	return e.buf
}

// DecodePool decodes a pool EncodePool encoded; path is its key.
func DecodePool(path string, b []byte) (*model.Pool, error) {
	d := decoder{buf: b}
	version := d.version(PoolRecordVersion)
	p := &model.Pool{Path: path}
	p.Revision = d.uvarint()
	if version >= PoolRecordV2 {
		p.Reservation = d.resources()
		p.Limit = d.resources()
	} else {
		p.Reservation = d.decimalResources()
		p.Limit = d.decimalResources()
	}
	p.Share = d.shares()
	p.CreateTime = d.time()
	if version >= PoolRecordV3 {
		p.HostPools = d.strings()
	}
	if version >= PoolRecordV4 {
		p.Clusters = d.clusterPolicy()
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("pool %s: %w", path, err)
	}
	return p, nil
}
