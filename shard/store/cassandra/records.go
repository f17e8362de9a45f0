package cassandra

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/store"
)

// The statements every record kept with a revision (jobs, updates,
// migrations, pools) is written and read by: a create conditional on the
// row not existing, a write conditional on its revision, and a read of
// its record.

// insertNew runs an "INSERT ... IF NOT EXISTS" statement: nil when
// applied, ErrExists when the row exists.
func (s *Store) insertNew(ctx context.Context, stmt string, args ...any) error {
	applied, err := s.query(ctx, stmt, args...).MapScanCAS(map[string]any{})
	if err != nil {
		return s.classify(ctx, err)
	}
	if !applied {
		return store.ErrExists
	}
	return nil
}

// compareAndSet runs an "UPDATE ... IF revision = ?" statement: nil when
// applied, ErrNotFound when the row does not exist, ErrConflict naming
// the stored revision when it is not given. A statement with more
// conditions passes refused, which says why a row at the given revision
// was not written from the row's columns (nil: ErrConflict as well).
func (s *Store) compareAndSet(ctx context.Context, stmt string, given uint64, refused func(row map[string]any) error, args ...any) error {
	prev := map[string]any{}
	applied, err := s.query(ctx, stmt, args...).MapScanCAS(prev)
	if err != nil {
		return s.classify(ctx, err)
	}
	if applied {
		return nil
	}
	stored, _ := prev["revision"].(int64)
	switch {
	case stored == 0:
		// Revisions start at 1: no stored revision means no row.
		return store.ErrNotFound
	case refused != nil && uint64(stored) == given:
		return refused(prev)
	}
	return fmt.Errorf("stored revision %d, given %d: %w", stored, given, store.ErrConflict)
}

// getRecord reads the one record column a "SELECT record ..." statement
// selects: ErrNotFound when there is no row or it holds no record.
func (s *Store) getRecord(ctx context.Context, stmt string, args ...any) ([]byte, error) {
	var record []byte
	err := s.query(ctx, stmt, args...).Scan(&record)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && record == nil) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	return record, nil
}

// The tables of store.RecordStore: each a Cassandra table of its own
// (t.CQL, else t.Name) keyed by t.Key, with the record's revision in a
// column of its own for the compare-and-set, in one partition (part = 0)
// when t.Part.

// recordCQL is the CQL of t's table: its name with the keyspace, and the
// condition that finds one row (the partition's, then the key's).
func (s *Store) recordCQL(t *store.Table) (table, where string) {
	table = s.cfg.Keyspace + "." + cmp.Or(t.CQL, t.Name)
	where = t.Key + " = ?"
	if t.Part {
		where = "part = 0 AND " + where
	}
	return table, where
}

// insertCQL inserts a record of t: its key, its revision when t's records
// carry one, then the record.
func (s *Store) insertCQL(t *store.Table) string {
	table, _ := s.recordCQL(t)
	cols, vals := t.Key, "?"
	if t.Revisioned() {
		cols, vals = cols+", revision", vals+", ?"
	}
	cols, vals = cols+", "+t.RecordColumn(), vals+", ?"
	if t.Part {
		cols, vals = "part, "+cols, "0, "+vals
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, cols, vals)
}

// CreateRecord stores rec under key unless the key is taken.
func (s *Store) CreateRecord(ctx context.Context, t *store.Table, key string, rec []byte) error {
	if err := store.CheckRevisioned(t); err != nil {
		return err
	}
	rev, err := t.Revision(rec)
	if err != nil {
		return err
	}
	if err := s.beginWrite(ctx); err != nil {
		return err
	}
	return s.insertNew(ctx, s.insertCQL(t)+" IF NOT EXISTS", key, int64(rev), rec)
}

// SwapRecord replaces key's record if its stored revision is rev.
func (s *Store) SwapRecord(ctx context.Context, t *store.Table, key string, rev uint64, rec []byte) error {
	if err := store.CheckRevisioned(t); err != nil {
		return err
	}
	next, err := t.Revision(rec)
	if err != nil {
		return err
	}
	if err := s.beginWrite(ctx); err != nil {
		return err
	}
	table, where := s.recordCQL(t)
	stmt := fmt.Sprintf("UPDATE %s SET revision = ?, %s = ? WHERE %s IF revision = ?", table, t.RecordColumn(), where)
	return s.compareAndSet(ctx, stmt, rev, nil, int64(next), rec, key, int64(rev))
}

// GetRecord returns key's record.
func (s *Store) GetRecord(ctx context.Context, t *store.Table, key string) ([]byte, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	table, where := s.recordCQL(t)
	stmt := fmt.Sprintf("SELECT %s FROM %s WHERE %s", t.RecordColumn(), table, where)
	if t.Revisioned() {
		return s.getRecord(ctx, stmt, key)
	}
	// A record without a revision may be empty: only a missing row is
	// not found.
	var rec []byte
	err := s.query(ctx, stmt, key).Scan(&rec)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	if rec == nil {
		rec = []byte{}
	}
	return rec, nil
}

// ListRecords returns every record of t.
func (s *Store) ListRecords(ctx context.Context, t *store.Table) ([]store.Record, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	table, _ := s.recordCQL(t)
	stmt := fmt.Sprintf("SELECT %s, %s FROM %s", t.Key, t.RecordColumn(), table)
	if t.Part {
		stmt += " WHERE part = 0"
	}
	iter := s.query(ctx, stmt).Iter()
	var (
		out    []store.Record
		key    string
		record []byte
	)
	for iter.Scan(&key, &record) {
		switch {
		case record != nil:
			out = append(out, store.Record{Key: key, Data: record})
		case !t.Revisioned():
			out = append(out, store.Record{Key: key, Data: []byte{}})
		}
		record = nil
	}
	if err := iter.Close(); err != nil {
		return nil, s.classify(ctx, err)
	}
	return out, nil
}

// DeleteRecord removes key's record.
func (s *Store) DeleteRecord(ctx context.Context, t *store.Table, key string) error {
	if err := s.beginWrite(ctx); err != nil {
		return err
	}
	table, where := s.recordCQL(t)
	if !t.Revisioned() {
		// No existence to check: a plain delete, not a Paxos round.
		return s.classify(ctx, s.query(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s", table, where), key).Exec())
	}
	applied, err := s.query(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s IF EXISTS", table, where), key).MapScanCAS(map[string]any{})
	if err != nil {
		return s.classify(ctx, err)
	}
	if !applied {
		return store.ErrNotFound
	}
	return nil
}

// maxPutBatchBytes bounds one batch of PutRecords; a larger call is split
// into batches of this size, each applied whole (the rows of a table
// with Part share one partition, so a batch of them is one mutation).
const maxPutBatchBytes = 1 << 20

// PutRecords stores or replaces records of a table without revisions.
func (s *Store) PutRecords(ctx context.Context, t *store.Table, recs []store.Record) error {
	if err := store.CheckPut(t, recs); err != nil {
		return err
	}
	if err := s.beginWrite(ctx); err != nil {
		return err
	}
	stmt := s.insertCQL(t)
	for len(recs) > 0 {
		b := s.session.NewBatch(gocql.UnloggedBatch).WithContext(ctx)
		size := 0
		for len(recs) > 0 && (size == 0 || size < maxPutBatchBytes) {
			data := recs[0].Data
			if data == nil {
				data = []byte{} // an empty record, not a null cell
			}
			b.Query(stmt, recs[0].Key, data)
			size += len(recs[0].Key) + len(recs[0].Data)
			recs = recs[1:]
		}
		if err := s.session.ExecuteBatch(b); err != nil {
			return s.classify(ctx, err)
		}
	}
	return nil
}
