package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Whole is a store with every aggregate and the audit log: what Copy
// reads and writes.
type Whole interface {
	Store
	AuditStore
}

// CopyOptions says how long copied records that expire are kept.
type CopyOptions struct {
	// EventRetention and AuditRetention are the ttl the events and audit
	// records are written with, counted from each one's time as when they
	// were first written (the server's settings: a record past it is not
	// copied).
	EventRetention, AuditRetention time.Duration
	// TaskBatch bounds the tasks read and written at once (0: 10,000).
	TaskBatch int
	// Tables are the RecordStore tables to copy (kinds.Tables()).
	Tables []*Table
}

// CopyCounts says what Copy wrote.
type CopyCounts struct {
	Jobs, Configs, Tasks, Updates, Events, Audit int
	// Records counts the records of each RecordStore table, by its name.
	Records map[string]int
}

// ErrNotEmpty means Copy's destination already holds records.
var ErrNotEmpty = errors.New("destination store is not empty")

// Copy writes every record of src into dst, which must hold no job,
// record of o.Tables or value (ErrNotEmpty): jobs with every config
// version, their tasks, updates and events, the records of o.Tables
// (pools, cluster migrations, hosts), named values and the audit log.
// Leases and fences are not copied: a region started on dst elects its
// leader anew. Revisions start again at 1 in dst, each record as it was
// read, but for the records of o.Tables, copied as they are stored.
//
// src is read aggregate by aggregate while it may be written to: each
// record is copied as one read saw it, but the copy is not one instant of
// src (a job created during the copy may be missing, a task newer than its
// job's record). A region started on the copy settles that as after any
// restart: the engine derives each job's state from its tasks and runs
// again, at least once, what it cannot find running.
func Copy(ctx context.Context, dst, src Whole, o CopyOptions) (CopyCounts, error) {
	var n CopyCounts
	if o.EventRetention <= 0 || o.AuditRetention <= 0 {
		return n, fmt.Errorf("copy: %w: event and audit retention must be positive", ErrInvalid)
	}
	if len(o.Tables) == 0 {
		return n, fmt.Errorf("copy: %w: no record tables to copy (kinds.Tables)", ErrInvalid)
	}
	if o.TaskBatch <= 0 {
		o.TaskBatch = 10000
	}
	if err := checkEmpty(ctx, dst, o.Tables); err != nil {
		return n, err
	}
	for _, step := range []func() error{
		func() error { return copyRecords(ctx, dst, src, o.Tables, &n) },
		func() error { return copyJobs(ctx, dst, src, o, &n) },
		func() error {
			if err := copyEvents(ctx, dst, src, model.HostPoolEvents, o, &n); err != nil {
				return fmt.Errorf("host pool events: %w", err)
			}
			return nil
		},
		func() error {
			list := func(ctx context.Context) ([]model.AuditRecord, error) { return src.ListAudit(ctx, AuditQuery{}) }
			put := func(ctx context.Context, recs []model.AuditRecord) error {
				return dst.AppendAudit(ctx, recs, o.AuditRetention)
			}
			return copyAll(ctx, list, put, &n.Audit)
		},
	} {
		if err := step(); err != nil {
			return n, fmt.Errorf("copy: %w", err)
		}
	}
	return n, nil
}

// copyAll writes the records list returns, if there are any, with one
// put, counting them.
func copyAll[T any](ctx context.Context, list func(context.Context) ([]T, error), put func(context.Context, []T) error, count *int) error {
	recs, err := list(ctx)
	if err != nil || len(recs) == 0 {
		return err
	}
	if err := put(ctx, recs); err != nil {
		return err
	}
	*count = len(recs)
	return nil
}

// copyRecords copies the records of tables as they are stored, counting
// them by table.
func copyRecords(ctx context.Context, dst, src Whole, tables []*Table, n *CopyCounts) error {
	n.Records = map[string]int{}
	for _, t := range tables {
		recs, err := src.ListRecords(ctx, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		if !t.Revisioned() {
			if len(recs) > 0 {
				if err := dst.PutRecords(ctx, t, recs); err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
			}
			n.Records[t.Name] = len(recs)
			continue
		}
		for _, r := range recs {
			if err := dst.CreateRecord(ctx, t, r.Key, r.Data); err != nil {
				return fmt.Errorf("%s %s: %w", t.Name, r.Key, err)
			}
			n.Records[t.Name]++
		}
	}
	return nil
}

// copyJobs copies every job with what it keeps (copyJob).
func copyJobs(ctx context.Context, dst, src Whole, o CopyOptions, n *CopyCounts) error {
	jobs, err := src.ListJobs(ctx)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if err := copyJob(ctx, dst, src, j, o, n); err != nil {
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
	}
	return nil
}

// checkEmpty refuses a destination that holds a job or a record of
// tables.
func checkEmpty(ctx context.Context, dst Whole, tables []*Table) error {
	jobs, err := dst.ListJobs(ctx)
	if err != nil {
		return fmt.Errorf("copy: destination: %w", err)
	}
	held := []string{}
	for _, t := range tables {
		recs, err := dst.ListRecords(ctx, t)
		if err != nil {
			return fmt.Errorf("copy: destination: %w", err)
		}
		if len(recs) > 0 {
			held = append(held, fmt.Sprintf("%d %s", len(recs), t.Name))
		}
	}
	if len(jobs) > 0 {
		held = append([]string{fmt.Sprintf("%d jobs", len(jobs))}, held...)
	}
	if len(held) > 0 {
		return fmt.Errorf("copy: %w: it holds %s", ErrNotEmpty, strings.Join(held, ", "))
	}
	return nil
}

// copyJob copies one job: its record with its current config, its other
// config versions, its tasks, updates and events.
func copyJob(ctx context.Context, dst, src Whole, j *model.Job, o CopyOptions, n *CopyCounts) error {
	versions, err := src.ListJobConfigVersions(ctx, j.ID)
	if err != nil {
		return err
	}
	if err := dst.CreateJob(ctx, j); err != nil {
		return err
	}
	n.Jobs++
	n.Configs++
	for _, v := range versions {
		if v == j.ConfigVersion {
			continue
		}
		spec, err := src.GetJobConfig(ctx, j.ID, v)
		if err != nil {
			return err
		}
		if err := dst.PutJobConfig(ctx, j.ID, v, spec); err != nil {
			return err
		}
		n.Configs++
	}
	tasks, err := src.ListTasks(ctx, j.ID)
	if err != nil {
		return err
	}
	for len(tasks) > 0 {
		batch := tasks[:min(len(tasks), o.TaskBatch)]
		tasks = tasks[len(batch):]
		for _, t := range batch {
			t.Revision = 0 // new in dst
		}
		if err := dst.WriteTasks(ctx, batch); err != nil {
			return err
		}
		n.Tasks += len(batch)
	}
	updates, err := src.ListUpdates(ctx, j.ID)
	if err != nil {
		return err
	}
	for _, u := range updates {
		if err := dst.CreateUpdate(ctx, u); err != nil {
			return err
		}
		n.Updates++
	}
	return copyEvents(ctx, dst, src, j.ID, o, n)
}

// copyEvents copies the unexpired events kept under job.
func copyEvents(ctx context.Context, dst, src Whole, job model.JobID, o CopyOptions, n *CopyCounts) error {
	const page = 10000
	after := uint64(0)
	for {
		events, err := src.ListEvents(ctx, EventQuery{Job: job, After: after, Limit: page})
		if err != nil || len(events) == 0 {
			return err
		}
		if err := dst.AppendEvents(ctx, events, o.EventRetention); err != nil {
			return err
		}
		n.Events += len(events)
		after = events[len(events)-1].Seq
		if len(events) < page {
			return nil
		}
	}
}
