package codec

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// EncodeJobRecord returns the stored record of j at revision rev: its
// status and config version. The spec is not part of it: it is stored
// apart, once per config version (EncodeConfig), so that the record, which
// changes with every status change, stays small.
func EncodeJobRecord(j *model.Job, rev uint64) []byte {
	version := byte(JobRecordV3)
	if hasPeriodic(&j.Status) {
		version = JobRecordV4
	}
	e := encoder{buf: make([]byte, 0, 96)}
	e.byte(version)
	e.uvarint(rev)
	e.jobStatus(&j.Status, version)
	e.uvarint(j.ConfigVersion)
	if version >= JobRecordV4 {
		e.periodic(&j.Status)
	}
	return e.buf
}

// JobRecordHasSpec reports whether a stored job record is of a version
// that holds its spec (JobRecordV1 or V2): the spec of config version 1.
func JobRecordHasSpec(b []byte) bool {
	return len(b) > 0 && b[0] < JobRecordV3
}

// DecodeJobRecord decodes a job record of any version; id is its key. A
// record that holds its spec (JobRecordHasSpec) is returned with that spec
// as config version 1; any other leaves Spec zero for the caller to fill
// from the config its ConfigVersion names.
func DecodeJobRecord(id model.JobID, b []byte) (*model.Job, error) {
	d := decoder{buf: b}
	version := d.version(JobRecordVersion)
	j := &model.Job{ID: id}
	j.Revision = d.uvarint()
	d.jobStatus(&j.Status, version)
	if version >= JobRecordV3 {
		j.ConfigVersion = d.uvarint()
		if version >= JobRecordV4 {
			d.periodic(&j.Status)
		}
		if err := d.done(); err != nil {
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		return j, nil
	}
	if d.err != nil {
		return nil, fmt.Errorf("job %s: %w", id, d.err)
	}
	j.ConfigVersion = 1
	layout := specV1
	if version == JobRecordV2 {
		layout = specV2
	}
	if err := inflateSpec(&j.Spec, d.buf, -1, layout); err != nil {
		return nil, fmt.Errorf("job %s spec: %w", id, err)
	}
	return j, nil
}

// EncodeConfig returns the stored form of a job's config: its record
// version, the length of the spec's encoding, then that encoding
// flate-compressed (a spec with an override per instance runs to
// megabytes, and compresses well).
func EncodeConfig(s *model.JobSpec) ([]byte, error) {
	if s.Schedule == nil {
		return encodeConfig(s, ConfigRecordV4)
	}
	return encodeConfig(s, ConfigRecordVersion)
}

// encodeConfig writes a config in the given record version (only tests
// write older ones, to make records as older builds did).
func encodeConfig(s *model.JobSpec, version byte) ([]byte, error) {
	spec := encoder{buf: make([]byte, 0, 512)}
	if err := spec.jobSpec(s, configLayout(version)); err != nil {
		return nil, err
	}
	if len(spec.buf) > maxSpecSize {
		return nil, fmt.Errorf("%w: spec encodes to %d bytes, more than %d", ErrSpecSize, len(spec.buf), maxSpecSize)
	}
	e := encoder{buf: make([]byte, 0, 16+len(spec.buf)/3)}
	e.byte(version)
	e.uvarint(uint64(len(spec.buf)))
	return deflate(e.buf, spec.buf)
}

// DecodeConfig decodes a config EncodeConfig encoded.
func DecodeConfig(b []byte) (*model.JobSpec, error) {
	d := decoder{buf: b}
	version := d.version(ConfigRecordVersion)
	size := d.uvarint()
	if d.err == nil && size > maxSpecSize {
		d.fail("spec size")
	}
	if d.err != nil {
		return nil, d.err
	}
	s := new(model.JobSpec)
	if err := inflateSpec(s, d.buf, int(size), configLayout(version)); err != nil {
		return nil, err
	}
	return s, nil
}

// ConfigSize returns the length of the spec encoding a config record holds
// once decompressed, without decompressing it: what a decoded spec costs
// a cache, roughly.
func ConfigSize(b []byte) int {
	d := decoder{buf: b}
	d.version(ConfigRecordVersion)
	return int(min(d.uvarint(), maxSpecSize))
}

// inflateSpec decompresses and decodes a spec of the given layout. size is
// the length of its encoding, or -1 when the record does not say.
func inflateSpec(s *model.JobSpec, compressed []byte, size int, layout specLayout) error {
	r := flateReaders.Get().(io.ReadCloser)
	defer flateReaders.Put(r)
	// A bytes.Reader is an io.ByteReader: flate reads no further than its
	// stream's end, so what is left after it is trailing garbage.
	src := bytes.NewReader(compressed)
	if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return fmt.Errorf("%w: spec does not decompress", ErrCorrupt)
	}
	var raw []byte
	var err error
	if size >= 0 {
		raw = make([]byte, size)
		_, err = io.ReadFull(r, raw)
		if err == nil {
			// The stream must end exactly there, and end whole.
			var one [1]byte
			if n, end := r.Read(one[:]); n != 0 || end != io.EOF || src.Len() != 0 {
				err = ErrCorrupt
			}
		}
	} else {
		raw, err = io.ReadAll(io.LimitReader(r, maxSpecSize+1))
		if len(raw) > maxSpecSize {
			err = ErrCorrupt
		}
	}
	if err != nil {
		return fmt.Errorf("%w: spec does not decompress", ErrCorrupt)
	}
	d := decoder{buf: raw}
	d.jobSpec(s, layout)
	return d.done()
}

// specLayout is which fields a stored spec has: specV1 is the spec of
// JobRecordV1, specV2 of JobRecordV2 (gang and revocable fields added),
// specV3 of ConfigRecordV1 (overrides added), specV4 of ConfigRecordV2
// (container, ports, probes and volumes of tasks; per-host and spread
// limits of the job), specV5 of ConfigRecordV3 (resources as integer units
// instead of doubles), specV6 of ConfigRecordV4 (the job's cluster
// policy), specV7 of ConfigRecordV5 (the job's schedule).
type specLayout byte

const (
	specV1 specLayout = iota + 1
	specV2
	specV3
	specV4
	specV5
	specV6
	specV7
)

// configLayout is the spec layout of a config record version.
func configLayout(version byte) specLayout {
	switch {
	case version >= ConfigRecordV5:
		return specV7
	case version >= ConfigRecordV4:
		return specV6
	case version >= ConfigRecordV3:
		return specV5
	case version >= ConfigRecordV2:
		return specV4
	}
	return specV3
}

// jobStatus writes a status as the given job record version has it (only
// tests write older ones, to make records as older builds did).
func (e *encoder) jobStatus(s *model.JobStatus, version byte) {
	e.byte(byte(s.State))
	e.bool(s.Killed)
	e.uvarint(uint64(s.TasksCreated))
	e.count(len(s.TaskStates), s.TaskStates == nil)
	states := make([]model.TaskState, 0, len(s.TaskStates))
	for st := range s.TaskStates {
		states = append(states, st)
	}
	slices.Sort(states)
	for _, st := range states {
		e.byte(byte(st))
		e.uvarint(uint64(s.TaskStates[st]))
	}
	e.time(s.CreateTime)
	e.time(s.StartTime)
	e.time(s.CompletionTime)
	e.string(s.Region)
	e.string(s.Message)
	if version >= JobRecordV3 {
		e.string(string(s.Update))
	}
}

// jobStatus reads a status written in the given job record version.
func (d *decoder) jobStatus(s *model.JobStatus, version byte) {
	s.State = model.JobState(d.byte())
	s.Killed = d.bool()
	s.TasksCreated = d.uint32()
	if n, isNil := d.count(2); !isNil {
		s.TaskStates = make(map[model.TaskState]uint32, n)
		for range n {
			st := model.TaskState(d.byte())
			s.TaskStates[st] = d.uint32()
		}
	}
	s.CreateTime = d.time()
	s.StartTime = d.time()
	s.CompletionTime = d.time()
	s.Region = d.string()
	s.Message = d.string()
	if version >= JobRecordV3 {
		s.Update = model.UpdateID(d.string())
	}
}

// jobSpec writes the fields of the given layout (only tests write older
// ones, to make records as older builds did).
func (e *encoder) jobSpec(s *model.JobSpec, layout specLayout) error {
	e.string(s.Name)
	e.byte(byte(s.Type))
	e.string(s.Pool)
	e.string(s.Region)
	e.varint(int64(s.Priority))
	e.bool(s.Preemptible)
	e.uvarint(uint64(s.Instances))
	e.uvarint(uint64(s.MaxRunning))
	e.uvarint(uint64(s.MaxAttempts))
	if err := e.taskSpec(&s.Task, layout); err != nil {
		return err
	}
	e.stringMap(s.Labels)
	if layout >= specV2 {
		e.uvarint(uint64(s.GangSize))
		e.bool(s.GangRestart)
		e.bool(s.Revocable)
	}
	if layout >= specV3 {
		e.count(len(s.Overrides), s.Overrides == nil)
		for i := range s.Overrides {
			o := &s.Overrides[i]
			e.count(len(o.Instances), o.Instances == nil)
			for _, r := range o.Instances {
				e.uvarint(uint64(r.From))
				e.uvarint(uint64(r.To))
			}
			if err := e.taskSpec(&o.Task, layout); err != nil {
				return err
			}
		}
	}
	if layout >= specV4 {
		e.placementLimits(s)
	}
	if layout >= specV6 {
		e.clusterPolicy(s.Clusters)
	}
	if layout >= specV7 {
		e.schedule(s.Schedule)
	}
	return nil
}

// jobSpec reads a spec of the given layout; fields it lacks are left zero.
func (d *decoder) jobSpec(s *model.JobSpec, layout specLayout) {
	s.Name = d.string()
	s.Type = model.JobType(d.byte())
	s.Pool = d.string()
	s.Region = d.string()
	s.Priority = d.int32()
	s.Preemptible = d.bool()
	s.Instances = d.uint32()
	s.MaxRunning = d.uint32()
	s.MaxAttempts = d.uint32()
	d.taskSpec(&s.Task, layout)
	s.Labels = d.stringMap()
	if layout >= specV2 {
		s.GangSize = d.uint32()
		s.GangRestart = d.bool()
		s.Revocable = d.bool()
	}
	if layout < specV3 {
		return
	}
	// An override takes at least 38 bytes: 4 counts and lengths, 32 of
	// resources, 1 of constraints count and 1 of grace; with resources as
	// varints, at least 10.
	least := 38
	if layout >= specV5 {
		least = 10
	}
	n, isNil := d.count(least)
	if isNil {
		d.specTail(s, layout)
		return
	}
	s.Overrides = make([]model.InstanceOverride, n)
	for i := range s.Overrides {
		o := &s.Overrides[i]
		if m, isNil := d.count(2); !isNil {
			o.Instances = make([]model.InstanceRange, m)
			for k := range o.Instances {
				o.Instances[k] = model.InstanceRange{From: d.uint32(), To: d.uint32()}
			}
		}
		d.taskSpec(&o.Task, layout)
		if d.err != nil {
			s.Overrides = nil
			return
		}
	}
	d.specTail(s, layout)
}

// specTail reads what a spec holds after its overrides.
func (d *decoder) specTail(s *model.JobSpec, layout specLayout) {
	if layout >= specV4 {
		d.placementLimits(s)
	}
	if layout >= specV6 {
		s.Clusters = d.clusterPolicy()
	}
	if layout >= specV7 {
		s.Schedule = d.schedule()
	}
}

// schedule writes a periodic job's schedule: a presence byte, then its
// fields.
func (e *encoder) schedule(s *model.Schedule) {
	e.bool(s != nil)
	if s != nil {
		e.string(s.Cron)
		e.string(s.TimeZone)
		e.byte(byte(s.Concurrency))
		e.varint(int64(s.StartingDeadline))
		e.uvarint(uint64(s.KeepRuns))
	}
}

func (d *decoder) schedule() *model.Schedule {
	if !d.bool() {
		return nil
	}
	return &model.Schedule{
		Cron:             d.string(),
		TimeZone:         d.string(),
		Concurrency:      model.Concurrency(d.byte()),
		StartingDeadline: time.Duration(d.varint()),
		KeepRuns:         d.uint32(),
	}
}

// hasPeriodic reports whether a status holds what JobRecordV4 and
// EventRecordV3 add: a periodic job's state or a run's link.
func hasPeriodic(s *model.JobStatus) bool { return s.Periodic != nil || s.RunOf != nil }

// periodic writes what JobRecordV4 adds to a job record: a periodic job's
// schedule state and a run's link, each behind a presence byte.
func (e *encoder) periodic(s *model.JobStatus) {
	e.bool(s.Periodic != nil)
	if p := s.Periodic; p != nil {
		e.bool(p.Suspended)
		e.time(p.LastTick)
		e.string(string(p.LastRun))
		e.uvarint(p.Launched)
		e.uvarint(p.Skipped)
		e.uvarint(p.Missed)
	}
	e.bool(s.RunOf != nil)
	if r := s.RunOf; r != nil {
		e.string(string(r.Parent))
		e.time(r.Tick)
	}
}

func (d *decoder) periodic(s *model.JobStatus) {
	if d.bool() {
		s.Periodic = &model.PeriodicStatus{
			Suspended: d.bool(),
			LastTick:  d.time(),
			LastRun:   model.JobID(d.string()),
			Launched:  d.uvarint(),
			Skipped:   d.uvarint(),
			Missed:    d.uvarint(),
		}
	}
	if d.bool() {
		s.RunOf = &model.RunOf{Parent: model.JobID(d.string()), Tick: d.time()}
	}
}

// clusterPolicy writes a cluster policy: a presence byte, then the
// preferred and the avoided clusters.
func (e *encoder) clusterPolicy(p *model.ClusterPolicy) {
	e.bool(p != nil)
	if p != nil {
		e.strings(p.Prefer)
		e.strings(p.Avoid)
	}
}

func (d *decoder) clusterPolicy() *model.ClusterPolicy {
	if !d.bool() {
		return nil
	}
	return &model.ClusterPolicy{Prefer: d.strings(), Avoid: d.strings()}
}

func (e *encoder) taskSpec(t *model.TaskSpec, layout specLayout) error {
	e.string(t.Command)
	e.strings(t.Args)
	e.stringMap(t.Env)
	if layout >= specV5 {
		e.resources(t.Resources)
	} else {
		e.decimalResources(t.Resources)
	}
	if err := e.constraints(t.Constraints, 1); err != nil {
		return err
	}
	e.varint(int64(t.KillGrace))
	if layout >= specV4 {
		e.workload(t)
	}
	return nil
}

func (d *decoder) taskSpec(t *model.TaskSpec, layout specLayout) {
	t.Command = d.string()
	t.Args = d.strings()
	t.Env = d.stringMap()
	if layout >= specV5 {
		t.Resources = d.resources()
	} else {
		t.Resources = d.decimalResources()
	}
	t.Constraints = d.constraints(1)
	t.KillGrace = time.Duration(d.varint())
	if layout >= specV4 {
		d.workload(t)
	}
}

func (e *encoder) constraints(cs []model.Constraint, depth int) error {
	if depth > maxConstraintDepth && cs != nil {
		return ErrConstraintDepth
	}
	e.count(len(cs), cs == nil)
	for i := range cs {
		c := &cs[i]
		e.string(c.Key)
		e.byte(byte(c.Op))
		e.strings(c.Values)
		if err := e.constraints(c.AllOf, depth+1); err != nil {
			return err
		}
		if err := e.constraints(c.AnyOf, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// constraints reads what encoder.constraints wrote; each constraint takes
// at least 5 bytes (key length, op, and three counts).
func (d *decoder) constraints(depth int) []model.Constraint {
	n, isNil := d.count(5)
	if isNil {
		return nil
	}
	if depth > maxConstraintDepth {
		d.fail("constraint depth")
		return nil
	}
	out := make([]model.Constraint, n)
	for i := range out {
		c := &out[i]
		c.Key = d.string()
		c.Op = model.ConstraintOp(d.byte())
		c.Values = d.strings()
		c.AllOf = d.constraints(depth + 1)
		c.AnyOf = d.constraints(depth + 1)
		if d.err != nil {
			return nil
		}
	}
	return out
}
