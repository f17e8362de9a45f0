package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// The audit log lives in bucket "audit": the key is the record's time (8
// bytes, nanoseconds since the epoch, big-endian) then the bucket's next
// sequence number (8 bytes), so keys are in time order and unique; the
// value is the expiry (as for events) followed by the record.

var _ store.AuditStore = (*Store)(nil)

// AppendAudit stores records in one transaction, each until its Time plus
// ttl; records already expired are not stored.
func (s *Store) AppendAudit(ctx context.Context, recs []model.AuditRecord, ttl time.Duration) error {
	if err := codec.CheckAudit(recs, ttl); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	now := time.Now().UnixMicro()
	// A gateway appends a record for every mutating call, before it
	// answers: calls made at once share one commit (group commit). The
	// function starts afresh each time, as Batch may run it again alone.
	err := s.batch(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(auditBucket)
		b.FillPercent = 0.9 // keys mostly grow
		for i := range recs {
			exp := expiryMicros(recs[i].Time, ttl)
			if exp <= now {
				continue
			}
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			key := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(recs[i].Time.UnixNano())), seq)
			val := codec.AppendAudit(binary.BigEndian.AppendUint64(nil, uint64(exp)), &recs[i])
			if err := b.Put(key, val); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	return nil
}

// ListAudit returns the unexpired records q selects, oldest first; it
// reads from the newest back to q.Since.
func (s *Store) ListAudit(ctx context.Context, q store.AuditQuery) ([]model.AuditRecord, error) {
	if err := codec.CheckAuditQuery(q); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	var out []model.AuditRecord
	now := time.Now().UnixMicro()
	since := q.Since.UnixNano()
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(auditBucket).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if !q.Since.IsZero() && int64(binary.BigEndian.Uint64(k)) <= since {
				break
			}
			if expired(v, now) {
				continue
			}
			r, err := codec.DecodeAudit(v[expiryLen:])
			if err != nil {
				return err
			}
			if q.Name != "" && r.Name != q.Name {
				continue
			}
			out = append(out, r)
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// PruneAudit deletes the expired records in one transaction.
func (s *Store) PruneAudit(ctx context.Context) (int, error) {
	removed := 0
	now := time.Now().UnixMicro()
	err := s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(auditBucket)
		var gone [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if expired(v, now) {
				gone = append(gone, k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		removed = len(gone)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return removed, nil
}
