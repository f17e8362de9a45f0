package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// Records of a kind kept whole under a key, each carrying its revision in
// its encoding, are kept by every backend through the five operations of
// RecordStore, written once per backend for every such kind. A kind is a
// Table (where it lives) and a Kind (its codec and checks); package
// shard/store/kinds declares them.

// Table says where a kind's records live in each backend.
type Table struct {
	// Name is the kind's bucket in the embedded store and its map in
	// memstore; its table in Cassandra unless CQL names another.
	Name string
	// CQL is its Cassandra table, where that is not Name.
	CQL string
	// Key is the Cassandra column that holds a record's key; Column the
	// one that holds the record ("record" unless set).
	Key, Column string
	// Part: in Cassandra its rows are in one partition, part = 0.
	Part bool
	// Revision reads the revision an encoded record carries; nil for a
	// table of records without one, written by PutRecords only.
	Revision func(rec []byte) (uint64, error)
}

// RecordColumn is the Cassandra column of the records.
func (t *Table) RecordColumn() string {
	if t.Column == "" {
		return "record"
	}
	return t.Column
}

// Revisioned says whether the table's records carry a revision.
func (t *Table) Revisioned() bool { return t.Revision != nil }

// Record is an encoded record and its key.
type Record struct {
	Key  string
	Data []byte
}

// RecordStore keeps the records of the tables package kinds declares.
// Keys are not empty; the records are encoded (package codec) and carry
// their revision, which SwapRecord compares.
type RecordStore interface {
	// CreateRecord stores rec under key; ErrExists if the key is taken.
	CreateRecord(ctx context.Context, t *Table, key string, rec []byte) error
	// SwapRecord replaces key's record with rec if the stored one's
	// revision is rev: ErrNotFound if there is none, ErrConflict (naming
	// both revisions) if its revision is another.
	SwapRecord(ctx context.Context, t *Table, key string, rev uint64, rec []byte) error
	// GetRecord returns key's record; ErrNotFound if there is none.
	GetRecord(ctx context.Context, t *Table, key string) ([]byte, error)
	// ListRecords returns every record of t, in no particular order.
	ListRecords(ctx context.Context, t *Table) ([]Record, error)
	// DeleteRecord removes key's record: ErrNotFound if there is none in
	// a table with revisions; in one without, a key without a record is
	// no error.
	DeleteRecord(ctx context.Context, t *Table, key string) error
	// PutRecords stores or replaces records of a table without revisions
	// (ErrInvalid for one with), as one write where the backend can (in
	// Cassandra, batches of at most about a MiB, each whole).
	PutRecords(ctx context.Context, t *Table, recs []Record) error
}

// CheckPut refuses PutRecords on a table with revisions, and a record
// without a key.
func CheckPut(t *Table, recs []Record) error {
	if t.Revisioned() {
		return fmt.Errorf("%w: %s records are written with their revision", ErrInvalid, t.Name)
	}
	for i, r := range recs {
		if r.Key == "" {
			return fmt.Errorf("%w: %s record %d has no key", ErrInvalid, t.Name, i)
		}
	}
	return nil
}

// CheckRevisioned refuses CreateRecord and SwapRecord on a table whose
// records carry no revision.
func CheckRevisioned(t *Table) error {
	if !t.Revisioned() {
		return fmt.Errorf("%w: %s records have no revision", ErrInvalid, t.Name)
	}
	return nil
}

// CheckSwap is how a backend that compares revisions itself decides a
// SwapRecord: stored is the record under the key (nil: none).
func CheckSwap(t *Table, stored []byte, rev uint64) error {
	if err := CheckRevisioned(t); err != nil {
		return err
	}
	if stored == nil {
		return ErrNotFound
	}
	have, err := t.Revision(stored)
	if err != nil {
		return err
	}
	if have != rev {
		return fmt.Errorf("stored revision %d, given %d: %w", have, rev, ErrConflict)
	}
	return nil
}

// Kind is a record kind on a Table: its key, revision, checks and codec.
// Its methods are the kind's typed store calls, over any RecordStore.
type Kind[R any] struct {
	Table *Table
	// Name names the kind in errors ("pool"); WriteVerb names its
	// replacing write ("update").
	Name, WriteVerb string
	Key             func(R) string
	Revision        func(R) *uint64
	// Check refuses a record that may not be stored; CheckKey a key
	// that cannot name one (nil: any key that is not empty).
	Check    func(R) error
	CheckKey func(string) error
	Encode   func(r R, rev uint64) []byte
	Decode   func(key string, rec []byte) (R, error)
	// Compare orders List, a total order (nil: by key).
	Compare func(a, b R) int
}

// Create stores a new record with revision 1 and sets its revision to 1;
// ErrExists if its key is taken.
func (k *Kind[R]) Create(ctx context.Context, s RecordStore, r R) error {
	if err := k.revisioned(true); err != nil {
		return fmt.Errorf("create %s: %w", k.Name, err)
	}
	if err := k.Check(r); err != nil {
		return fmt.Errorf("create %s: %w", k.Name, err)
	}
	key := k.Key(r)
	if err := s.CreateRecord(ctx, k.Table, key, k.Encode(r, 1)); err != nil {
		return fmt.Errorf("create %s %s: %w", k.Name, key, err)
	}
	*k.Revision(r) = 1
	return nil
}

// Write replaces a record whose stored revision equals its revision, and
// increments its revision.
func (k *Kind[R]) Write(ctx context.Context, s RecordStore, r R) error {
	if err := k.revisioned(true); err != nil {
		return fmt.Errorf("%s %s: %w", k.WriteVerb, k.Name, err)
	}
	if err := k.Check(r); err != nil {
		return fmt.Errorf("%s %s: %w", k.WriteVerb, k.Name, err)
	}
	key, rev := k.Key(r), k.Revision(r)
	if err := s.SwapRecord(ctx, k.Table, key, *rev, k.Encode(r, *rev+1)); err != nil {
		return fmt.Errorf("%s %s %s: %w", k.WriteVerb, k.Name, key, err)
	}
	*rev++
	return nil
}

// Get returns the record under key.
func (k *Kind[R]) Get(ctx context.Context, s RecordStore, key string) (R, error) {
	var zero R
	if err := k.checkKey(key); err != nil {
		return zero, fmt.Errorf("%s: %w", k.Name, err)
	}
	rec, err := s.GetRecord(ctx, k.Table, key)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", k.Name, key, err)
	}
	r, err := k.Decode(key, rec)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", k.Name, key, err)
	}
	return r, nil
}

// List returns every record of the kind, in its order.
func (k *Kind[R]) List(ctx context.Context, s RecordStore) ([]R, error) {
	recs, err := s.ListRecords(ctx, k.Table)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", k.Name, err)
	}
	if k.Compare == nil {
		slices.SortFunc(recs, func(a, b Record) int { return cmp.Compare(a.Key, b.Key) })
	}
	out := make([]R, 0, len(recs))
	for _, rec := range recs {
		r, err := k.Decode(rec.Key, rec.Data)
		if err != nil {
			return nil, fmt.Errorf("list %ss: %s: %w", k.Name, rec.Key, err)
		}
		out = append(out, r)
	}
	if k.Compare != nil {
		slices.SortFunc(out, k.Compare)
	}
	return out, nil
}

// Delete removes the record under key; ErrNotFound if there is none.
func (k *Kind[R]) Delete(ctx context.Context, s RecordStore, key string) error {
	if err := k.checkKey(key); err != nil {
		return fmt.Errorf("delete %s: %w", k.Name, err)
	}
	if err := s.DeleteRecord(ctx, k.Table, key); err != nil {
		return fmt.Errorf("delete %s %s: %w", k.Name, key, err)
	}
	return nil
}

// Put stores or replaces records of a kind without revisions, as one
// write where the backend can.
func (k *Kind[R]) Put(ctx context.Context, s RecordStore, rs []R) error {
	if err := k.revisioned(false); err != nil {
		return fmt.Errorf("put %ss: %w", k.Name, err)
	}
	recs := make([]Record, len(rs))
	for i, r := range rs {
		if err := k.Check(r); err != nil {
			return fmt.Errorf("put %ss: %s %d: %w", k.Name, k.Name, i, err)
		}
		recs[i] = Record{Key: k.Key(r), Data: k.Encode(r, 0)}
	}
	if len(recs) == 0 {
		return nil
	}
	if err := s.PutRecords(ctx, k.Table, recs); err != nil {
		return fmt.Errorf("put %ss: %w", k.Name, err)
	}
	return nil
}

// revisioned refuses a call for records with revisions (want) on a kind
// without, or the other way round.
func (k *Kind[R]) revisioned(want bool) error {
	if k.Table.Revisioned() != want {
		return fmt.Errorf("%w: %s records have no such write", ErrInvalid, k.Name)
	}
	return nil
}

func (k *Kind[R]) checkKey(key string) error {
	if k.CheckKey != nil {
		return k.CheckKey(key)
	}
	if key == "" {
		return fmt.Errorf("%w: empty %s key", ErrInvalid, k.Name)
	}
	return nil
}

// Prepared is a record of a kind encoded at its next revision, for a
// backend's write of a pass (Pass.Records).
type Prepared struct {
	Table *Table
	Key   string
	// Rev is the revision the stored record must have.
	Rev  uint64
	Data []byte
}

// PassRecord is a record of a kind written with a pass (Pass.Records).
type PassRecord interface {
	// Prepare checks the record and encodes it at its next revision.
	Prepare() (Prepared, error)
	// Revision is the record's revision, incremented once written.
	Revision() *uint64
	// Where is the record's table and key.
	Where() (*Table, string)
}

// Record is r as a record of a pass.
func (k *Kind[R]) Record(r R) PassRecord { return kindRecord[R]{k, r} }

type kindRecord[R any] struct {
	k *Kind[R]
	r R
}

func (x kindRecord[R]) Prepare() (Prepared, error) {
	if err := x.k.Check(x.r); err != nil {
		return Prepared{}, fmt.Errorf("%s %s: %w", x.k.WriteVerb, x.k.Name, err)
	}
	rev := *x.k.Revision(x.r)
	return Prepared{Table: x.k.Table, Key: x.k.Key(x.r), Rev: rev, Data: x.k.Encode(x.r, rev+1)}, nil
}

func (x kindRecord[R]) Revision() *uint64 { return x.k.Revision(x.r) }

func (x kindRecord[R]) Where() (*Table, string) { return x.k.Table, x.k.Key(x.r) }

// PrepareRecords prepares a pass's records; the first refused ends it
// with "write pass: " and why.
func PrepareRecords(recs []PassRecord) ([]Prepared, error) {
	out := make([]Prepared, len(recs))
	for i, r := range recs {
		p, err := r.Prepare()
		if err != nil {
			return nil, fmt.Errorf("write pass: %w", err)
		}
		out[i] = p
	}
	return out, nil
}

// StoredRevision reads the revision of the record stored for r (false
// when there is none).
func StoredRevision(ctx context.Context, s RecordStore, r PassRecord) (uint64, bool, error) {
	t, key := r.Where()
	data, err := s.GetRecord(ctx, t, key)
	if errors.Is(err, ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	rev, err := t.Revision(data)
	return rev, err == nil, err
}
