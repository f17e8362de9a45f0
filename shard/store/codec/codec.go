package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// Every stored value starts with the version of its record encoding. A
// reader decodes every version from 1 up to the latest of the kind and
// rejects a newer one as ErrCorrupt; a writer always writes the latest.
const (
	// TaskRecordV2 appends ConfigVersion to TaskRecordV1.
	// TaskRecordV3 appends Health, Ready, Ports and PinnedHost.
	TaskRecordV1 = 1
	TaskRecordV2 = 2
	TaskRecordV3 = 3
	// TaskRecordVersion is the latest task runtime encoding.
	TaskRecordVersion = TaskRecordV3
	// JobRecordV1 and JobRecordV2 hold the status and, flate-compressed,
	// the spec: V1 without the gang and revocable fields, V2 with them.
	// Such a record reads as a job whose spec is config version 1.
	// JobRecordV3 holds no spec: the status (with Update) and the config
	// version, the spec being a config record of its own.
	JobRecordV1 = 1
	JobRecordV2 = 2
	JobRecordV3 = 3
	// JobRecordV4 appends a periodic job's schedule state and a run's
	// link to its periodic job. It is written only for those jobs: any
	// other job is still written as V3, which earlier builds read.
	JobRecordV4 = 4
	// JobRecordVersion is the latest job encoding.
	JobRecordVersion = JobRecordV4
	// ConfigRecordV1 is the spec of JobRecordV2 plus Overrides,
	// flate-compressed; ConfigRecordV2 adds the tasks' containers, ports,
	// probes and volumes and the job's per-host and spread limits. Both
	// hold resources as doubles (cpu in cores); ConfigRecordV3 holds them
	// as integer units (varints of millicores, MiB, MiB, devices).
	ConfigRecordV1 = 1
	ConfigRecordV2 = 2
	ConfigRecordV3 = 3
	// ConfigRecordV4 appends the job's cluster policy.
	ConfigRecordV4 = 4
	// ConfigRecordV5 appends the job's schedule. It is written only for a
	// periodic job: any other config is still written as V4.
	ConfigRecordV5 = 5
	// ConfigRecordVersion is the latest config (job spec) encoding.
	ConfigRecordVersion = ConfigRecordV5
	// PoolRecordV1 holds reservation and limit as doubles (cpu in cores,
	// +Inf for no limit), PoolRecordV2 as integer units; both hold the
	// shares as doubles. PoolRecordV3 appends the host pools the pool may
	// use.
	PoolRecordV1 = 1
	PoolRecordV2 = 2
	PoolRecordV3 = 3
	// PoolRecordV4 appends the pool's cluster policy.
	PoolRecordV4 = 4
	// PoolRecordVersion is the latest pool encoding.
	PoolRecordVersion = PoolRecordV4
	// HostRecordV2 appends the host's port ranges and whether it runs
	// images. Both hold the capacity as doubles; HostRecordV3 holds it as
	// integer units and appends the drain's deadline and whether the host
	// was marked down. HostRecordV4 appends the host's host pool and the
	// host pool the policy is moving it to.
	HostRecordV1 = 1
	HostRecordV2 = 2
	HostRecordV3 = 3
	HostRecordV4 = 4
	// HostRecordVersion is the latest host record encoding.
	HostRecordVersion = HostRecordV4
	// UpdateRecordVersion and EventRecordVersion are the latest encodings
	// of job updates and events.
	// UpdateRecordV2 appends the failures counted, the failures allowed,
	// whether to roll back on failure, and whether it is paused.
	// EventRecordV2 adds the host pool move kind; job and task events
	// are as in EventRecordV1.
	UpdateRecordV1 = 1
	UpdateRecordV2 = 2
	// UpdateRecordV3 appends the time an instance must stay healthy,
	// in-place, and the instances in flight.
	UpdateRecordV3 = 3
	// UpdateRecordV4 appends the canary phase: the canary count, the time
	// after which it promotes itself, whether and by whom it was promoted.
	// An update without canaries is still written as V3, which the
	// releases before V4 read.
	UpdateRecordV4 = 4
	// UpdateRecordV5 appends whether the canaries are extra instances;
	// it is written only for such an update.
	UpdateRecordV5      = 5
	UpdateRecordVersion = UpdateRecordV5
	EventRecordV1       = 1
	EventRecordV2       = 2
	// EventRecordV3 appends to a job event what JobRecordV4 appends to a
	// job record; it is written only for a periodic job or a run, any
	// other event still as V2.
	EventRecordV3      = 3
	EventRecordVersion = EventRecordV3
	// MigrationRecordVersion is the latest encoding of migrations.
	MigrationRecordV1      = 1
	MigrationRecordVersion = MigrationRecordV1
)

// maxConstraintDepth bounds AllOf/AnyOf nesting, on write and on read, so a
// self-referencing constraint or a corrupt value cannot recurse forever.
const maxConstraintDepth = 32

var (
	// ErrCorrupt means a stored value could not be decoded.
	ErrCorrupt = errors.New("stored value is corrupt")
	// ErrConstraintDepth means a job's constraints nest deeper than the
	// codec allows, or contain themselves; it wraps store.ErrInvalid.
	ErrConstraintDepth = fmt.Errorf("%w: constraints nested deeper than %d", store.ErrInvalid, maxConstraintDepth)
)

// encoder appends to buf; it never fails.
type encoder struct{ buf []byte }

func (e *encoder) byte(b byte)      { e.buf = append(e.buf, b) }
func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) float(v float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
}
func (e *encoder) string(s string) { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bool(b bool) {
	if b {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

// count writes a length that keeps nil apart from empty: 0 is nil.
func (e *encoder) count(n int, isNil bool) {
	if isNil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(n) + 1)
	}
}

// time writes 0 for the zero time, else nanoseconds+1 then Unix seconds;
// every time.Time keeps its instant to the nanosecond.
func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(t.Nanosecond()) + 1)
	e.varint(t.Unix())
}

func (e *encoder) strings(ss []string) {
	e.count(len(ss), ss == nil)
	for _, s := range ss {
		e.string(s)
	}
}

// stringMap writes entries sorted by key, so equal maps encode equally.
func (e *encoder) stringMap(m map[string]string) {
	e.count(len(m), m == nil)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.string(k)
		e.string(m[k])
	}
}

// decoder reads from buf; the first failure sticks in err and every later
// read returns a zero value, so callers check err once at the end.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrCorrupt, what)
	}
	d.buf = nil
}

func (d *decoder) byte() byte {
	if len(d.buf) < 1 {
		d.fail("byte")
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) uint32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail("uint32")
		return 0
	}
	return uint32(v)
}

func (d *decoder) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("int32")
		return 0
	}
	return int32(v)
}

func (d *decoder) float() float64 {
	if len(d.buf) < 8 {
		d.fail("float")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.buf))
	d.buf = d.buf[8:]
	return v
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bool")
	return false
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.fail("string length")
		return ""
	}
	s := string(d.buf[:n])
	d.buf = d.buf[n:]
	return s
}

// count reads what encoder.count wrote. Every element takes at least
// minSize bytes, which bounds the allocation a corrupt count can cause.
func (d *decoder) count(minSize int) (n int, isNil bool) {
	c := d.uvarint()
	if c == 0 {
		return 0, true
	}
	if c-1 > uint64(len(d.buf)/minSize) {
		d.fail("count")
		return 0, true
	}
	return int(c - 1), false
}

func (d *decoder) time() time.Time {
	ns := d.uvarint()
	if ns == 0 {
		return time.Time{}
	}
	if ns > 1e9 {
		d.fail("time")
		return time.Time{}
	}
	return time.Unix(d.varint(), int64(ns-1)).UTC()
}

func (d *decoder) strings() []string {
	n, isNil := d.count(1)
	if isNil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string()
	}
	return out
}

func (d *decoder) stringMap() map[string]string {
	n, isNil := d.count(2)
	if isNil {
		return nil
	}
	out := make(map[string]string, n)
	for range n {
		k := d.string()
		out[k] = d.string()
	}
	return out
}

// version reads a record's version byte and fails unless it is between 1
// and latest.
func (d *decoder) version(latest byte) byte {
	v := d.byte()
	if d.err == nil && (v == 0 || v > latest) {
		d.err = fmt.Errorf("%w: record version %d, this build reads 1 to %d", ErrCorrupt, v, latest)
		d.buf = nil
	}
	return v
}

func (d *decoder) done() error {
	if d.err == nil && len(d.buf) != 0 {
		d.fail("trailing bytes")
	}
	return d.err
}

// AppendTask appends the encoding of t, stored at revision rev, to dst.
// The task id is the key and is not repeated in the value.
func AppendTask(dst []byte, t *model.TaskRuntime, rev uint64) []byte {
	e := encoder{buf: dst}
	e.byte(TaskRecordVersion)
	e.uvarint(rev)
	e.uvarint(uint64(t.Run))
	e.byte(byte(t.State))
	e.byte(byte(t.Goal))
	e.string(string(t.Host))
	e.string(t.Cluster)
	e.string(t.Reason)
	e.string(t.Message)
	e.varint(int64(t.ExitCode))
	e.uvarint(uint64(t.Failures))
	e.time(t.StartTime)
	e.time(t.CompletionTime)
	e.time(t.UpdateTime)
	e.time(t.RetryAfter)
	// Added in TaskRecordV2.
	e.uvarint(t.ConfigVersion)
	// Added in TaskRecordV3.
	e.taskWorkload(t)
	return e.buf
}

// StoredRevision reads only the revision of an encoded record whose
// versions go up to latest.
func StoredRevision(b []byte, latest byte) (uint64, error) {
	d := decoder{buf: b}
	d.version(latest)
	rev := d.uvarint()
	return rev, d.err
}

// DecodeTask decodes a runtime AppendTask encoded; id is its key.
func DecodeTask(id model.TaskID, b []byte) (*model.TaskRuntime, error) {
	t := new(model.TaskRuntime)
	if err := DecodeTaskInto(t, id, b); err != nil {
		return nil, err
	}
	return t, nil
}

// DecodeTaskInto decodes into *t, overwriting every field.
func DecodeTaskInto(t *model.TaskRuntime, id model.TaskID, b []byte) error {
	d := decoder{buf: b}
	version := d.version(TaskRecordVersion)
	t.ID = id
	t.Revision = d.uvarint()
	t.Run = d.uint32()
	t.State = model.TaskState(d.byte())
	t.Goal = model.TaskState(d.byte())
	t.Host = model.HostID(d.string())
	t.Cluster = d.string()
	t.Reason = d.string()
	t.Message = d.string()
	t.ExitCode = d.int32()
	t.Failures = d.uint32()
	t.StartTime = d.time()
	t.CompletionTime = d.time()
	t.UpdateTime = d.time()
	t.RetryAfter = d.time()
	t.ConfigVersion = 0
	if version >= TaskRecordV2 {
		t.ConfigVersion = d.uvarint()
	}
	t.Health, t.Ready, t.Extra = 0, 0, nil
	if version >= TaskRecordV3 {
		d.taskWorkload(t)
	}
	if err := d.done(); err != nil {
		return fmt.Errorf("task %s: %w", id, err)
	}
	return nil
}
