package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// kind is a kind of record the store keeps by id, with a revision that
// every write compares and sets: updates, migrations and pools. V is a
// record as kept: a copy of it, or its encoding.
type kind[K ~string, T any, V any] struct {
	// name and writeVerb name the kind and its replacing write in errors
	// ("migration", "write").
	name, writeVerb string
	id              func(*T) K
	revision        func(*T) *uint64
	check           func(*T) error         // the codec's check of a record to store
	keep            func(*T, uint64) V     // a record as kept, at a revision
	load            func(K, V) (*T, error) // a copy of a kept record
	// refer checks what a new record refers to, under the lock (nil:
	// nothing); same checks what a write may not change (nil: nothing).
	refer func(*state, *T) error
	same  func(old, r *T) error
}

// create stores r in records at revision 1 unless its id is taken, and
// sets r's revision to 1.
func (k *kind[K, T, V]) create(ctx context.Context, s *Store, records map[K]V, r *T) error {
	if err := k.check(r); err != nil {
		return fmt.Errorf("create %s: %w", k.name, err)
	}
	kept := k.keep(r, 1)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if k.refer != nil {
		if err := k.refer(s.state, r); err != nil {
			return err
		}
	}
	id := k.id(r)
	if _, ok := records[id]; ok {
		return fmt.Errorf("create %s %s: %w", k.name, id, store.ErrExists)
	}
	records[id] = kept
	*k.revision(r) = 1
	return nil
}

// write replaces r's record in records if its stored revision equals r's,
// and increments r's revision.
func (k *kind[K, T, V]) write(ctx context.Context, s *Store, records map[K]V, r *T) error {
	if err := k.check(r); err != nil {
		return fmt.Errorf("%s %s: %w", k.writeVerb, k.name, err)
	}
	kept := k.keep(r, *k.revision(r)+1)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := k.checkWrite(records, r); err != nil {
		return err
	}
	records[k.id(r)] = kept
	*k.revision(r)++
	return nil
}

// checkWrite checks that r can replace its record in records, as write
// says; the caller holds the lock.
func (k *kind[K, T, V]) checkWrite(records map[K]V, r *T) error {
	id := k.id(r)
	v, ok := records[id]
	if !ok {
		return fmt.Errorf("%s %s %s: %w", k.writeVerb, k.name, id, store.ErrNotFound)
	}
	old, err := k.load(id, v)
	if err != nil {
		return err
	}
	if stored, given := *k.revision(old), *k.revision(r); stored != given {
		return fmt.Errorf("%s %s %s: stored revision %d, given %d: %w", k.writeVerb, k.name, id, stored, given, store.ErrConflict)
	}
	if k.same != nil {
		if err := k.same(old, r); err != nil {
			return fmt.Errorf("%s %s %s: %w", k.writeVerb, k.name, id, err)
		}
	}
	return nil
}

// get returns a copy of the record id in records.
func (k *kind[K, T, V]) get(ctx context.Context, s *Store, records map[K]V, id K) (*T, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	v, ok := records[id]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", k.name, id, store.ErrNotFound)
	}
	return k.load(id, v)
}

// list returns copies of the records in records that keep accepts (nil:
// all) in order; the caller holds the lock.
func (k *kind[K, T, V]) list(records map[K]V, keep func(V) bool, order func(a, b *T) int) ([]*T, error) {
	var out []*T
	for id, v := range records {
		if keep != nil && !keep(v) {
			continue
		}
		r, err := k.load(id, v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, order)
	return out, nil
}

// copied returns a function that copies a record kept as a copy.
func copied[K ~string, T any](clone func(*T) *T) func(K, *T) (*T, error) {
	return func(_ K, r *T) (*T, error) { return clone(r), nil }
}

// updateKind is the updates, kept as copies; a new one's job must exist,
// and a write may not move one to another job.
var updateKind = &kind[model.UpdateID, model.Update, *model.Update]{
	name: "update", writeVerb: "write",
	id:       func(u *model.Update) model.UpdateID { return u.ID },
	revision: func(u *model.Update) *uint64 { return &u.Revision },
	check:    codec.CheckUpdate,
	keep:     func(u *model.Update, rev uint64) *model.Update { c := cloneUpdate(u); c.Revision = rev; return c },
	load:     copied[model.UpdateID](cloneUpdate),
	refer: func(s *state, u *model.Update) error {
		if _, ok := s.jobs[u.Job]; !ok {
			return fmt.Errorf("create update %s: job %s: %w", u.ID, u.Job, store.ErrNotFound)
		}
		return nil
	},
	same: func(old, u *model.Update) error {
		if old.Job != u.Job {
			return fmt.Errorf("%w: it is of job %s, not %s", store.ErrInvalid, old.Job, u.Job)
		}
		return nil
	},
}
