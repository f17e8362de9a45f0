package codec

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// EncodeUpdate returns the stored form of u at revision rev. The update id
// is the key and is not repeated in the value.
func EncodeUpdate(u *model.Update, rev uint64) []byte {
	version := byte(UpdateRecordV3)
	if u.Canary > 0 || u.AutoPromoteAfter > 0 || u.Promoted || u.PromotedBy != "" {
		version = UpdateRecordV4
	}
	if u.CanaryExtra {
		version = UpdateRecordV5
	}
	e := encoder{buf: make([]byte, 0, 64+len(u.Job)+len(u.Message))}
	e.byte(version)
	e.uvarint(rev)
	e.string(string(u.Job))
	e.uvarint(u.FromVersion)
	e.uvarint(u.ToVersion)
	e.uvarint(uint64(u.BatchSize))
	e.byte(byte(u.State))
	e.uvarint(uint64(u.InstancesTotal))
	e.uvarint(uint64(u.InstancesDone))
	e.time(u.CreateTime)
	e.time(u.CompletionTime)
	e.string(u.Message)
	// Added in UpdateRecordV2.
	e.uvarint(uint64(u.InstancesFailed))
	e.uvarint(uint64(u.MaxFailures))
	e.bool(u.RollbackOnFailure)
	e.bool(u.Paused)
	// Added in UpdateRecordV3.
	e.uvarint(uint64(u.MinHealthy / time.Millisecond))
	e.bool(u.InPlace)
	e.uvarint(uint64(u.InstancesInFlight))
	if version >= UpdateRecordV4 {
		e.uvarint(uint64(u.Canary))
		e.uvarint(uint64(u.AutoPromoteAfter / time.Millisecond))
		e.bool(u.Promoted)
		e.string(u.PromotedBy)
	}
	if version >= UpdateRecordV5 {
		e.bool(u.CanaryExtra)
	}
	return e.buf
}

// DecodeUpdate decodes an update EncodeUpdate encoded; id is its key.
func DecodeUpdate(id model.UpdateID, b []byte) (*model.Update, error) {
	d := decoder{buf: b}
	version := d.version(UpdateRecordVersion)
	u := &model.Update{ID: id}
	u.Revision = d.uvarint()
	u.Job = model.JobID(d.string())
	u.FromVersion = d.uvarint()
	u.ToVersion = d.uvarint()
	u.BatchSize = d.uint32()
	u.State = model.UpdateState(d.byte())
	u.InstancesTotal = d.uint32()
	u.InstancesDone = d.uint32()
	u.CreateTime = d.time()
	u.CompletionTime = d.time()
	u.Message = d.string()
	if version >= UpdateRecordV2 {
		u.InstancesFailed = d.uint32()
		u.MaxFailures = d.uint32()
		u.RollbackOnFailure = d.bool()
		u.Paused = d.bool()
	}
	if version >= UpdateRecordV3 {
		u.MinHealthy = time.Duration(d.uvarint()) * time.Millisecond
		u.InPlace = d.bool()
		u.InstancesInFlight = d.uint32()
	}
	if version >= UpdateRecordV4 {
		u.Canary = d.uint32()
		u.AutoPromoteAfter = time.Duration(d.uvarint()) * time.Millisecond
		u.Promoted = d.bool()
		u.PromotedBy = d.string()
	}
	if version >= UpdateRecordV5 {
		u.CanaryExtra = d.bool()
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
	return u, nil
}

// EncodeHost returns the stored form of a host record. The host id is the
// key and is not repeated in the value.
func EncodeHost(h *model.HostRecord) []byte {
	return encodeHost(h, HostRecordVersion)
}

// encodeHost writes a host record in the given version (only tests write
// older ones, to make records as older builds did).
func encodeHost(h *model.HostRecord, version byte) []byte {
	e := encoder{buf: make([]byte, 0, 128)}
	e.byte(version)
	e.string(h.Host.Hostname)
	e.string(h.Host.Cluster)
	e.string(h.Host.Kind)
	e.byte(byte(h.Host.State))
	if version >= HostRecordV3 {
		e.resources(h.Host.Capacity)
	} else {
		e.decimalResources(h.Host.Capacity)
	}
	e.stringMap(h.Host.Labels)
	e.bool(h.Draining)
	e.string(h.DrainReason)
	e.time(h.DrainTime)
	e.time(h.LastSeen)
	if version >= HostRecordV2 {
		e.count(len(h.Host.Ports), h.Host.Ports == nil)
		for _, r := range h.Host.Ports {
			e.uvarint(uint64(r.From))
			e.uvarint(uint64(r.To))
		}
		e.bool(h.Host.RunsImages)
	}
	if version >= HostRecordV3 {
		e.time(h.DrainDeadline)
		e.bool(h.Down)
	}
	if version >= HostRecordV4 {
		e.string(h.HostPool)
		e.string(h.HostPoolTarget)
	}
	return e.buf
}

// DecodeHost decodes a host record EncodeHost encoded; id is its key.
func DecodeHost(id model.HostID, b []byte) (*model.HostRecord, error) {
	d := decoder{buf: b}
	version := d.version(HostRecordVersion)
	h := &model.HostRecord{Host: model.Host{ID: id}}
	h.Host.Hostname = d.string()
	h.Host.Cluster = d.string()
	h.Host.Kind = d.string()
	h.Host.State = model.HostState(d.byte())
	if version >= HostRecordV3 {
		h.Host.Capacity = d.resources()
	} else {
		h.Host.Capacity = d.decimalResources()
	}
	h.Host.Labels = d.stringMap()
	h.Draining = d.bool()
	h.DrainReason = d.string()
	h.DrainTime = d.time()
	h.LastSeen = d.time()
	if version >= HostRecordV2 {
		if n, isNil := d.count(2); !isNil {
			h.Host.Ports = make([]model.PortRange, n)
			for i := range h.Host.Ports {
				h.Host.Ports[i] = model.PortRange{From: d.uint32(), To: d.uint32()}
			}
		}
		h.Host.RunsImages = d.bool()
	}
	if version >= HostRecordV3 {
		h.DrainDeadline = d.time()
		h.Down = d.bool()
	}
	if version >= HostRecordV4 {
		h.HostPool = d.string()
		h.HostPoolTarget = d.string()
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("host %s: %w", id, err)
	}
	return h, nil
}
