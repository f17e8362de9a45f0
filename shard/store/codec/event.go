package codec

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Kinds of event, the byte after an event record's time.
const (
	eventJob  = 1
	eventTask = 2
	// eventHostPoolMove is new in EventRecordV2.
	eventHostPoolMove = 3
)

// AppendEvent appends the encoding of a checked event (CheckEvents) to dst:
// its time, then the job status as a job record of JobRecordV3 has it
// (with what V4 adds for a periodic job or a run, in EventRecordV3), or
// the task's instance and its task record (at the task's Revision), or
// the host pool move. The job and Seq are the key and are not repeated in
// the value.
func AppendEvent(dst []byte, ev *model.Event) []byte {
	e := encoder{buf: dst}
	if st := ev.JobStatus; st != nil && hasPeriodic(st) {
		e.byte(EventRecordV3)
		e.time(ev.Time)
		e.byte(eventJob)
		e.jobStatus(st, JobRecordV3)
		e.periodic(st)
		return e.buf
	}
	e.byte(EventRecordV2)
	e.time(ev.Time)
	if ev.JobStatus != nil {
		e.byte(eventJob)
		e.jobStatus(ev.JobStatus, JobRecordV3)
		return e.buf
	}
	if m := ev.HostPoolMove; m != nil {
		e.byte(eventHostPoolMove)
		e.string(string(m.Host))
		e.string(m.From)
		e.string(m.To)
		e.byte(byte(m.Phase))
		e.string(m.Reason)
		e.varint(int64(m.Waited))
		return e.buf
	}
	e.byte(eventTask)
	e.uvarint(uint64(ev.Task.ID.Instance))
	return AppendTask(e.buf, ev.Task, ev.Task.Revision)
}

// DecodeEvent decodes an event AppendEvent encoded; job and seq are its key.
func DecodeEvent(job model.JobID, seq uint64, b []byte) (model.Event, error) {
	ev := model.Event{Seq: seq, Job: job}
	d := decoder{buf: b}
	version := d.version(EventRecordVersion)
	ev.Time = d.time()
	switch kind := d.byte(); {
	case d.err != nil:
	case kind == eventHostPoolMove && version >= EventRecordV2:
		m := &model.HostPoolMove{Host: model.HostID(d.string()), From: d.string(), To: d.string()}
		m.Phase = model.HostPoolMovePhase(d.byte())
		m.Reason = d.string()
		m.Waited = time.Duration(d.varint())
		ev.HostPoolMove = m
	case kind == eventJob:
		ev.JobStatus = new(model.JobStatus)
		d.jobStatus(ev.JobStatus, JobRecordV3)
		if version >= EventRecordV3 {
			d.periodic(ev.JobStatus)
		}
	case kind == eventTask:
		id := model.TaskID{Job: job, Instance: d.uint32()}
		if d.err == nil {
			ev.Task = new(model.TaskRuntime)
			d.err = DecodeTaskInto(ev.Task, id, d.buf)
			d.buf = nil
		}
	default:
		d.fail("event kind")
	}
	if err := d.done(); err != nil {
		return model.Event{}, fmt.Errorf("event %d of job %s: %w", seq, job, err)
	}
	return ev, nil
}

// EventInstance returns the instance of a task event's record without
// decoding the rest; ok is false for a job event or a corrupt record.
func EventInstance(b []byte) (instance uint32, ok bool) {
	d := decoder{buf: b}
	d.version(EventRecordVersion)
	d.time()
	if d.byte() != eventTask {
		return 0, false
	}
	instance = d.uint32()
	return instance, d.err == nil
}
