package codec

import (
	"cmp"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// The checks every backend makes before it stores anything: each fails
// with store.ErrInvalid on a value no backend stores.

// CheckJob fails on a nil job or one without an id.
func CheckJob(job *model.Job) error {
	if job == nil {
		return fmt.Errorf("%w: nil job", store.ErrInvalid)
	}
	if job.ID == "" {
		return fmt.Errorf("%w: job id is empty", store.ErrInvalid)
	}
	return nil
}

// CheckJobRecord is CheckJob for a record that replaces a stored one: it
// must name its config version.
func CheckJobRecord(job *model.Job) error {
	if err := CheckJob(job); err != nil {
		return err
	}
	if job.ConfigVersion == 0 {
		return fmt.Errorf("%w: job %s names no config version", store.ErrInvalid, job.ID)
	}
	return nil
}

// CheckPool fails on a nil pool or one without a path.
func CheckPool(pool *model.Pool) error {
	if pool == nil {
		return fmt.Errorf("%w: nil pool", store.ErrInvalid)
	}
	return CheckPoolPath(pool.Path)
}

// CheckPoolPath fails on an empty pool path.
func CheckPoolPath(path string) error {
	if path == "" {
		return fmt.Errorf("%w: pool path is empty", store.ErrInvalid)
	}
	return nil
}

// CheckConfig fails on a config without a job id, a version or a spec.
func CheckConfig(id model.JobID, version uint64, spec *model.JobSpec) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: job id is empty", store.ErrInvalid)
	case version == 0:
		return fmt.Errorf("%w: job %s: config version 0", store.ErrInvalid, id)
	case spec == nil:
		return fmt.Errorf("%w: job %s config %d: nil spec", store.ErrInvalid, id, version)
	}
	return nil
}

// CheckUpdate fails on a nil update, or one without an id or a job.
func CheckUpdate(u *model.Update) error {
	switch {
	case u == nil:
		return fmt.Errorf("%w: nil update", store.ErrInvalid)
	case u.ID == "":
		return fmt.Errorf("%w: update id is empty", store.ErrInvalid)
	case u.Job == "":
		return fmt.Errorf("%w: update %s names no job", store.ErrInvalid, u.ID)
	}
	return nil
}

// CompareUpdates is the order of ListUpdates, oldest first: by create
// time, then id.
func CompareUpdates(a, b *model.Update) int {
	return cmp.Or(a.CreateTime.Compare(b.CreateTime), cmp.Compare(a.ID, b.ID))
}

// CheckHosts fails, naming the first, on a nil host record or one without
// an id.
func CheckHosts(hosts []*model.HostRecord) error {
	for i, h := range hosts {
		switch {
		case h == nil:
			return fmt.Errorf("%w: host record %d is nil", store.ErrInvalid, i)
		case h.Host.ID == "":
			return fmt.Errorf("%w: host record %d has no id", store.ErrInvalid, i)
		}
	}
	return nil
}

// CheckEvents fails, naming the first, on an event without a job or
// without exactly one of a job status, a task of that job and a host pool
// move (under model.HostPoolEvents), and on a ttl that is not positive.
func CheckEvents(events []model.Event, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w: event ttl %v is not positive", store.ErrInvalid, ttl)
	}
	for i := range events {
		e := &events[i]
		switch {
		case e.Job == "":
			return fmt.Errorf("%w: event %d names no job", store.ErrInvalid, e.Seq)
		case e.HostPoolMove != nil && (e.JobStatus != nil || e.Task != nil):
			return fmt.Errorf("%w: event %d of job %s carries a host pool move and more", store.ErrInvalid, e.Seq, e.Job)
		case (e.HostPoolMove != nil) != (e.Job == model.HostPoolEvents):
			return fmt.Errorf("%w: event %d: host pool moves go under %s, and only they", store.ErrInvalid, e.Seq, model.HostPoolEvents)
		case e.HostPoolMove == nil && (e.JobStatus == nil) == (e.Task == nil):
			return fmt.Errorf("%w: event %d of job %s must carry a job status or a task", store.ErrInvalid, e.Seq, e.Job)
		case e.Task != nil && e.Task.ID.Job != e.Job:
			return fmt.Errorf("%w: event %d of job %s carries task %s", store.ErrInvalid, e.Seq, e.Job, e.Task.ID)
		}
	}
	return nil
}

// CheckEventQuery fails on a query that names no job.
func CheckEventQuery(q store.EventQuery) error {
	if q.Job == "" {
		return fmt.Errorf("%w: event query names no job", store.ErrInvalid)
	}
	if q.Limit < 0 {
		return fmt.Errorf("%w: event query limit %d", store.ErrInvalid, q.Limit)
	}
	return nil
}
