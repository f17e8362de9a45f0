package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

var _ store.AuditStore = (*Store)(nil)

type storedAudit struct {
	rec     model.AuditRecord
	expires time.Time
}

// AppendAudit stores records in time order (records of the same time in
// the order appended), each until its Time plus ttl.
func (s *Store) AppendAudit(ctx context.Context, recs []model.AuditRecord, ttl time.Duration) error {
	if err := codec.CheckAudit(recs, ttl); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	now := time.Now()
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, r := range recs {
		exp := r.Time.Add(ttl)
		if !now.Before(exp) {
			continue
		}
		i, _ := slices.BinarySearchFunc(s.audit, r.Time, func(a storedAudit, t time.Time) int {
			if a.rec.Time.After(t) {
				return 1
			}
			return -1 // equal times go after those stored
		})
		s.audit = slices.Insert(s.audit, i, storedAudit{rec: r, expires: exp})
	}
	return nil
}

// ListAudit returns the unexpired records q selects, oldest first.
func (s *Store) ListAudit(ctx context.Context, q store.AuditQuery) ([]model.AuditRecord, error) {
	if err := codec.CheckAuditQuery(q); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	now := time.Now()
	var out []model.AuditRecord
	// Newest first, then reversed: a limit keeps the newest.
	for i := len(s.audit) - 1; i >= 0; i-- {
		a := &s.audit[i]
		if !a.rec.Time.After(q.Since) {
			break
		}
		if !now.Before(a.expires) || (q.Name != "" && a.rec.Name != q.Name) {
			continue
		}
		out = append(out, a.rec)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	slices.Reverse(out)
	return out, nil
}

// PruneAudit removes the expired records.
func (s *Store) PruneAudit(ctx context.Context) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	now := time.Now()
	n := len(s.audit)
	s.audit = slices.DeleteFunc(s.audit, func(a storedAudit) bool { return !now.Before(a.expires) })
	return n - len(s.audit), nil
}
