package memstore

import (
	"context"
	"slices"

	"github.com/peloton-federated/peloton/shard/store"
)

// The records of store.RecordStore's tables, kept encoded by table name
// and key: a read decodes a copy.

// CreateRecord stores rec under key unless the key is taken.
func (s *Store) CreateRecord(ctx context.Context, t *store.Table, key string, rec []byte) error {
	if err := store.CheckRevisioned(t); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.records[t.Name][key]; ok {
		return store.ErrExists
	}
	s.putRecordLocked(t, key, rec)
	return nil
}

// SwapRecord replaces key's record if its stored revision is rev.
func (s *Store) SwapRecord(ctx context.Context, t *store.Table, key string, rev uint64, rec []byte) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := store.CheckSwap(t, s.records[t.Name][key], rev); err != nil {
		return err
	}
	s.putRecordLocked(t, key, rec)
	return nil
}

// GetRecord returns key's record.
func (s *Store) GetRecord(ctx context.Context, t *store.Table, key string) ([]byte, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	rec, ok := s.records[t.Name][key]
	if !ok {
		return nil, store.ErrNotFound
	}
	return slices.Clone(rec), nil
}

// ListRecords returns every record of t.
func (s *Store) ListRecords(ctx context.Context, t *store.Table) ([]store.Record, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]store.Record, 0, len(s.records[t.Name]))
	for k, rec := range s.records[t.Name] {
		out = append(out, store.Record{Key: k, Data: slices.Clone(rec)})
	}
	return out, nil
}

// DeleteRecord removes key's record.
func (s *Store) DeleteRecord(ctx context.Context, t *store.Table, key string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.records[t.Name][key]; !ok && t.Revisioned() {
		return store.ErrNotFound
	}
	delete(s.records[t.Name], key)
	return nil
}

// putRecordLocked keeps a copy of rec under key; the caller holds the
// lock.
func (s *Store) putRecordLocked(t *store.Table, key string, rec []byte) {
	if s.records[t.Name] == nil {
		s.records[t.Name] = map[string][]byte{}
	}
	s.records[t.Name][key] = slices.Clone(rec)
}

// PutRecords stores or replaces records of a table without revisions.
func (s *Store) PutRecords(ctx context.Context, t *store.Table, recs []store.Record) error {
	if err := store.CheckPut(t, recs); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, r := range recs {
		s.putRecordLocked(t, r.Key, r.Data)
	}
	return nil
}
