package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// ValueLister lists every named value of a store, which ValueStore alone
// cannot: its callers know their keys, a copy of the whole store does not.
type ValueLister interface {
	ListValues(ctx context.Context) (map[string][]byte, error)
}

// Whole is a store with every aggregate, the audit log and a listing of
// its values: what Copy reads and writes.
type Whole interface {
	Store
	AuditStore
	ValueLister
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
}

// CopyCounts says what Copy wrote.
type CopyCounts struct {
	Jobs, Configs, Tasks, Updates, Pools, Values, Migrations, Hosts, Events, Audit int
}

// ErrNotEmpty means Copy's destination already holds records.
var ErrNotEmpty = errors.New("destination store is not empty")

// Copy writes every record of src into dst, which must hold no job, pool
// or value (ErrNotEmpty): jobs with every config version, their tasks,
// updates and events, pools, named values, cluster migrations, hosts and
// the audit log. Leases and fences are not copied: a region started on
// dst elects its leader anew. Revisions start again at 1 in dst, each
// record as it was read.
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
	if o.TaskBatch <= 0 {
		o.TaskBatch = 10000
	}
	if err := checkEmpty(ctx, dst); err != nil {
		return n, err
	}
	pools, err := src.ListPools(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: %w", err)
	}
	for _, p := range pools { // ordered by path: parents first
		if err := dst.CreatePool(ctx, p); err != nil {
			return n, fmt.Errorf("copy: %w", err)
		}
		n.Pools++
	}
	values, err := src.ListValues(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: %w", err)
	}
	for k, v := range values {
		if err := dst.PutValue(ctx, k, v); err != nil {
			return n, fmt.Errorf("copy: %w", err)
		}
		n.Values++
	}
	jobs, err := src.ListJobs(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: %w", err)
	}
	for _, j := range jobs {
		if err := copyJob(ctx, dst, src, j, o, &n); err != nil {
			return n, fmt.Errorf("copy: job %s: %w", j.ID, err)
		}
	}
	if err := copyEvents(ctx, dst, src, model.HostPoolEvents, o, &n); err != nil {
		return n, fmt.Errorf("copy: host pool events: %w", err)
	}
	migrations, err := src.ListMigrations(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: %w", err)
	}
	for _, m := range migrations {
		if err := dst.CreateMigration(ctx, m); err != nil {
			return n, fmt.Errorf("copy: %w", err)
		}
		n.Migrations++
	}
	hosts, err := src.ListHosts(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: %w", err)
	}
	if len(hosts) > 0 {
		if err := dst.PutHosts(ctx, hosts); err != nil {
			return n, fmt.Errorf("copy: %w", err)
		}
		n.Hosts = len(hosts)
	}
	audit, err := src.ListAudit(ctx, AuditQuery{})
	if err != nil {
		return n, fmt.Errorf("copy: %w", err)
	}
	if len(audit) > 0 {
		if err := dst.AppendAudit(ctx, audit, o.AuditRetention); err != nil {
			return n, fmt.Errorf("copy: %w", err)
		}
		n.Audit = len(audit)
	}
	return n, nil
}

// checkEmpty refuses a destination that holds a job, a pool or a value.
func checkEmpty(ctx context.Context, dst Whole) error {
	jobs, err := dst.ListJobs(ctx)
	if err != nil {
		return fmt.Errorf("copy: destination: %w", err)
	}
	pools, err := dst.ListPools(ctx)
	if err != nil {
		return fmt.Errorf("copy: destination: %w", err)
	}
	values, err := dst.ListValues(ctx)
	if err != nil {
		return fmt.Errorf("copy: destination: %w", err)
	}
	if len(jobs)+len(pools)+len(values) > 0 {
		return fmt.Errorf("copy: %w: it holds %d jobs, %d pools and %d values", ErrNotEmpty, len(jobs), len(pools), len(values))
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
