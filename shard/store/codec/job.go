package codec

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// maxSpecSize bounds a decompressed spec, so a corrupt value cannot make a
// reader allocate without limit.
const maxSpecSize = 64 << 20

var flateWriters = sync.Pool{New: func() any {
	w, err := flate.NewWriter(nil, flate.BestSpeed)
	if err != nil {
		return err // unreachable: BestSpeed is a valid level
	}
	return w
}}

// EncodeJob returns the stored form of j at revision rev: the status, then
// the spec, flate-compressed because a spec can be large and is read far
// less often than it is stored.
func EncodeJob(j *model.Job, rev uint64) ([]byte, error) {
	spec := encoder{buf: make([]byte, 0, 256)}
	if err := spec.jobSpec(&j.Spec); err != nil {
		return nil, err
	}
	e := encoder{buf: make([]byte, 0, 64+len(spec.buf)/2)}
	e.byte(JobRecordVersion)
	e.uvarint(rev)
	e.jobStatus(&j.Status)

	w, ok := flateWriters.Get().(*flate.Writer)
	if !ok {
		return nil, fmt.Errorf("flate writer unavailable")
	}
	defer flateWriters.Put(w)
	out := bytes.NewBuffer(e.buf)
	w.Reset(out)
	if _, err := w.Write(spec.buf); err != nil {
		return nil, fmt.Errorf("compress spec: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress spec: %w", err)
	}
	return out.Bytes(), nil
}

// DecodeJob decodes a job EncodeJob encoded; id is its key.
func DecodeJob(id model.JobID, b []byte) (*model.Job, error) {
	d := decoder{buf: b}
	version := d.version(JobRecordVersion)
	j := &model.Job{ID: id}
	j.Revision = d.uvarint()
	d.jobStatus(&j.Status)
	if d.err != nil {
		return nil, fmt.Errorf("job %s: %w", id, d.err)
	}
	r := flate.NewReader(bytes.NewReader(d.buf))
	raw, err := io.ReadAll(io.LimitReader(r, maxSpecSize+1))
	if err != nil || len(raw) > maxSpecSize {
		return nil, fmt.Errorf("job %s: %w: spec does not decompress", id, ErrCorrupt)
	}
	spec := decoder{buf: raw}
	spec.jobSpec(&j.Spec, version)
	if err := spec.done(); err != nil {
		return nil, fmt.Errorf("job %s spec: %w", id, err)
	}
	return j, nil
}

func (e *encoder) jobStatus(s *model.JobStatus) {
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
}

func (d *decoder) jobStatus(s *model.JobStatus) {
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
}

func (e *encoder) jobSpec(s *model.JobSpec) error {
	e.string(s.Name)
	e.byte(byte(s.Type))
	e.string(s.Pool)
	e.string(s.Region)
	e.varint(int64(s.Priority))
	e.bool(s.Preemptible)
	e.uvarint(uint64(s.Instances))
	e.uvarint(uint64(s.MaxRunning))
	e.uvarint(uint64(s.MaxAttempts))
	t := &s.Task
	e.string(t.Command)
	e.strings(t.Args)
	e.stringMap(t.Env)
	e.resources(t.Resources)
	if err := e.constraints(t.Constraints, 1); err != nil {
		return err
	}
	e.varint(int64(t.KillGrace))
	e.stringMap(s.Labels)
	// Added in JobRecordV2.
	e.uvarint(uint64(s.GangSize))
	e.bool(s.GangRestart)
	e.bool(s.Revocable)
	return nil
}

// jobSpec reads a spec written in the given job record version; fields
// that version lacks are left zero.
func (d *decoder) jobSpec(s *model.JobSpec, version byte) {
	s.Name = d.string()
	s.Type = model.JobType(d.byte())
	s.Pool = d.string()
	s.Region = d.string()
	s.Priority = d.int32()
	s.Preemptible = d.bool()
	s.Instances = d.uint32()
	s.MaxRunning = d.uint32()
	s.MaxAttempts = d.uint32()
	t := &s.Task
	t.Command = d.string()
	t.Args = d.strings()
	t.Env = d.stringMap()
	t.Resources = d.resources()
	t.Constraints = d.constraints(1)
	t.KillGrace = time.Duration(d.varint())
	s.Labels = d.stringMap()
	if version >= JobRecordV2 {
		s.GangSize = d.uint32()
		s.GangRestart = d.bool()
		s.Revocable = d.bool()
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
