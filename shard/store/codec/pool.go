package codec

import (
	"fmt"

	"github.com/peloton-federated/peloton/shard/model"
)

// resources writes the four amounts as raw IEEE 754 bits, so +Inf (an
// unlimited limit), -0 and every NaN payload come back exactly.
func (e *encoder) resources(r model.Resources) {
	e.float(r.CPU)
	e.float(r.MemMB)
	e.float(r.DiskMB)
	e.float(r.GPU)
}

func (d *decoder) resources() model.Resources {
	var r model.Resources
	r.CPU = d.float()
	r.MemMB = d.float()
	r.DiskMB = d.float()
	r.GPU = d.float()
	return r
}

// EncodePool returns the stored form of p at revision rev. The path is the
// key and is not repeated in the value.
func EncodePool(p *model.Pool, rev uint64) []byte {
	e := encoder{buf: make([]byte, 0, 2+10+3*32+14)}
	e.byte(PoolRecordVersion)
	e.uvarint(rev)
	e.resources(p.Reservation)
	e.resources(p.Limit)
	e.resources(p.Share)
	e.time(p.CreateTime)
	return e.buf
}

// DecodePool decodes a pool EncodePool encoded; path is its key.
func DecodePool(path string, b []byte) (*model.Pool, error) {
	d := decoder{buf: b}
	d.version(PoolRecordVersion)
	p := &model.Pool{Path: path}
	p.Revision = d.uvarint()
	p.Reservation = d.resources()
	p.Limit = d.resources()
	p.Share = d.resources()
	p.CreateTime = d.time()
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("pool %s: %w", path, err)
	}
	return p, nil
}
