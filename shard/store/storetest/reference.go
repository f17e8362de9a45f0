package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// referenceModel is the naive definition of the contract: plain maps, no
// concurrency, no encoding.
type referenceModel struct {
	jobs    map[model.JobID]*model.Job
	configs map[model.JobID]map[uint64]*model.JobSpec
	tasks   map[model.JobID]map[uint32]*model.TaskRuntime
}

// outcome is the set of errors an operation may return; empty means success.
type outcome []error

func (o outcome) allows(err error) bool {
	if len(o) == 0 {
		return err == nil
	}
	for _, want := range o {
		if errors.Is(err, want) {
			return true
		}
	}
	return false
}

func (r *referenceModel) createJob(j *model.Job) outcome {
	if _, ok := r.jobs[j.ID]; ok {
		return outcome{store.ErrExists}
	}
	c := Normal(j)
	c.Revision = 1
	c.ConfigVersion = max(c.ConfigVersion, 1)
	r.jobs[j.ID] = c
	r.configs[j.ID] = map[uint64]*model.JobSpec{c.ConfigVersion: &c.Spec}
	r.tasks[j.ID] = map[uint32]*model.TaskRuntime{}
	return nil
}

func (r *referenceModel) putJobConfig(id model.JobID, version uint64, spec *model.JobSpec) outcome {
	versions, ok := r.configs[id]
	if !ok {
		return outcome{store.ErrNotFound}
	}
	if versions[version] != nil {
		return outcome{store.ErrExists}
	}
	versions[version] = Normal(spec)
	return nil
}

func (r *referenceModel) updateJob(j *model.Job) outcome {
	old, ok := r.jobs[j.ID]
	if !ok {
		return outcome{store.ErrNotFound}
	}
	if old.Revision != j.Revision {
		return outcome{store.ErrConflict}
	}
	c := Normal(j)
	c.Revision++
	c.Spec = *Normal(r.configs[j.ID][j.ConfigVersion])
	r.jobs[j.ID] = c
	return nil
}

func (r *referenceModel) deleteJob(id model.JobID) outcome {
	if _, ok := r.jobs[id]; !ok {
		return outcome{store.ErrNotFound}
	}
	delete(r.jobs, id)
	delete(r.configs, id)
	delete(r.tasks, id)
	return nil
}

func (r *referenceModel) writeTasks(batch []*model.TaskRuntime) outcome {
	var fails outcome
	next := map[model.TaskID]*model.TaskRuntime{}
	for _, t := range batch {
		byInstance, ok := r.tasks[t.ID.Job]
		if !ok {
			fails = append(fails, store.ErrNotFound)
			continue
		}
		var current uint64
		if old, ok := next[t.ID]; ok {
			current = old.Revision
		} else if old, ok := byInstance[t.ID.Instance]; ok {
			current = old.Revision
		}
		if current != t.Revision {
			fails = append(fails, store.ErrConflict)
			continue
		}
		c := Normal(t)
		c.Revision++
		next[t.ID] = c
	}
	if len(fails) > 0 {
		return fails
	}
	for id, t := range next {
		r.tasks[id.Job][id.Instance] = t
	}
	return nil
}

func (r *referenceModel) taskRevision(id model.TaskID) uint64 {
	if t, ok := r.tasks[id.Job][id.Instance]; ok {
		return t.Revision
	}
	return 0
}

// requireSameAs fails unless s holds exactly what r holds.
func (r *referenceModel) requireSameAs(t *testing.T, s store.Store, step int) {
	t.Helper()
	ctx := context.Background()
	jobs, err := s.ListJobs(ctx)
	mustNil(t, err, "ListJobs")
	want := slices.SortedFunc(maps.Values(r.jobs), func(a, b *model.Job) int { return cmp.Compare(a.ID, b.ID) })
	requireEqual(t, fmt.Sprintf("jobs after step %d", step), jobs, want)
	for id, versions := range r.configs {
		got, err := s.ListJobConfigVersions(ctx, id)
		mustNil(t, err, "ListJobConfigVersions")
		if wantVersions := slices.Sorted(maps.Keys(versions)); !slices.Equal(got, wantVersions) {
			t.Fatalf("config versions of %s after step %d: %v, want %v", id, step, got, wantVersions)
		}
	}
	for id, byInstance := range r.tasks {
		wantTasks := slices.SortedFunc(maps.Values(byInstance), func(a, b *model.TaskRuntime) int {
			return cmp.Compare(a.ID.Instance, b.ID.Instance)
		})
		requireEqual(t, fmt.Sprintf("tasks of %s after step %d", id, step), listTasks(t, s, id), wantTasks)
	}
}

// testMatchesReferenceModel applies random operations, a fair share of
// them stale or aimed at missing jobs, to the store and to the reference
// model, and requires the same outcome and the same state after each.
func testMatchesReferenceModel(t *testing.T, s store.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	ref := &referenceModel{jobs: map[model.JobID]*model.Job{}, configs: map[model.JobID]map[uint64]*model.JobSpec{},
		tasks: map[model.JobID]map[uint32]*model.TaskRuntime{}}
	ids := []model.JobID{"a", "b", "c", "a/b"}
	skew := func(rev uint64) uint64 {
		switch rng.IntN(10) {
		case 0:
			return rev + 1
		case 1:
			return rev &^ 1
		}
		return rev
	}
	const steps = 400
	for step := range steps {
		id := ids[rng.IntN(len(ids))]
		var what string
		var want outcome
		var err error
		switch op := rng.IntN(10); {
		case op == 0:
			what = "CreateJob " + string(id)
			j := &model.Job{ID: id, Spec: model.JobSpec{Name: fmt.Sprint(step), Instances: uint32(step)}}
			want = ref.createJob(j)
			err = s.CreateJob(ctx, j)
		case op == 1 && rng.IntN(3) == 0:
			version := uint64(1 + rng.IntN(4))
			what = fmt.Sprintf("PutJobConfig %s %d", id, version)
			spec := &model.JobSpec{Name: fmt.Sprint(step), Instances: uint32(step)}
			want = ref.putJobConfig(id, version, spec)
			err = s.PutJobConfig(ctx, id, version, spec)
		case op == 1:
			what = "UpdateJob " + string(id)
			rev, version := uint64(0), uint64(1)
			if old, ok := ref.jobs[id]; ok {
				rev = old.Revision
				// Any stored config may become the job's.
				versions := slices.Sorted(maps.Keys(ref.configs[id]))
				version = versions[rng.IntN(len(versions))]
			}
			j := &model.Job{ID: id, Spec: model.JobSpec{Name: fmt.Sprint(step)}, Revision: skew(rev), ConfigVersion: version}
			j.Status.Message = fmt.Sprint("step ", step)
			before := j.Revision
			want = ref.updateJob(j)
			err = s.UpdateJob(ctx, j)
			if err == nil && j.Revision != before+1 || err != nil && j.Revision != before {
				t.Fatalf("step %d: %s moved caller's revision %d to %d (err %v)", step, what, before, j.Revision, err)
			}
		case op == 2 && rng.IntN(3) == 0:
			what = "DeleteJob " + string(id)
			want = ref.deleteJob(id)
			err = s.DeleteJob(ctx, id)
		default:
			what = "WriteTasks"
			batch := make([]*model.TaskRuntime, 1+rng.IntN(6))
			seen := map[model.TaskID]uint64{}
			for i := range batch {
				tid := model.TaskID{Job: ids[rng.IntN(len(ids))], Instance: uint32(rng.IntN(10))}
				rev, ok := seen[tid]
				if !ok {
					rev = ref.taskRevision(tid)
				}
				task := FullTask(tid)
				task.Revision = skew(rev)
				task.Message = fmt.Sprint("step ", step, " entry ", i)
				seen[tid] = task.Revision + 1
				batch[i] = task
			}
			revs := make([]uint64, len(batch))
			for i, task := range batch {
				revs[i] = task.Revision
			}
			want = ref.writeTasks(batch)
			err = s.WriteTasks(ctx, batch)
			for i, task := range batch {
				if err == nil && task.Revision != revs[i]+1 || err != nil && task.Revision != revs[i] {
					t.Fatalf("step %d: WriteTasks moved %s revision %d to %d (err %v)", step, task.ID, revs[i], task.Revision, err)
				}
			}
		}
		if !want.allows(err) {
			t.Fatalf("step %d: %s returned %v, want one of %v", step, what, err, want)
		}
		ref.requireSameAs(t, s, step)
	}
}
