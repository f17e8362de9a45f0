package cassandra

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/codec"
)

// The audit log. Records are partitioned by the UTC day of their time
// (audit, newest first inside a day) and audit_days lists the days that
// have records, so ListAudit reads back from the newest day to q.Since
// without probing empty days. Rows carry a TTL, as events do, and
// expires hides a record the moment its retention ends. Two records of
// the same time are ordered by seq, which grows with every record this
// store appends, and told apart across processes by writer.

var _ store.AuditStore = (*Store)(nil)

const auditDay = 24 * time.Hour

func dayOf(t time.Time) int { return int(math.Floor(float64(t.Unix()) / auditDay.Seconds())) }

// auditWriter tells the records of this process from other writers'.
var auditWriter = rand.Int64()

// auditSeq is the last seq handed out: the wall clock in nanoseconds,
// moved on by one when two records would share it.
var auditSeq atomic.Int64

func nextAuditSeq() int64 {
	for {
		last, now := auditSeq.Load(), time.Now().UnixNano()
		next := max(now, last+1)
		if auditSeq.CompareAndSwap(last, next) {
			return next
		}
	}
}

// registeredDays remembers the days this store registered in audit_days,
// so that appending to today's log writes the day's row once, not with
// every record (every mutating call). A remembered day is trusted only
// while it is yesterday or later: PruneAudit never forgets such a day.
type registeredDays struct {
	mu   sync.Mutex
	days map[int]bool
}

func (r *registeredDays) known(day int, now time.Time) bool {
	if day < dayOf(now)-1 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.days[day]
}

func (r *registeredDays) add(day int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.days == nil || len(r.days) > 8 {
		r.days = map[int]bool{}
	}
	r.days[day] = true
}

// AppendAudit stores records, each with a TTL that keeps it at least ttl
// after its Time; records already expired are not stored. The days are
// registered first, then each day's records go as one unlogged batch.
func (s *Store) AppendAudit(ctx context.Context, recs []model.AuditRecord, ttl time.Duration) error {
	if err := codec.CheckAudit(recs, ttl); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	now := time.Now()
	batches := map[int]*gocql.Batch{}
	var days []int
	for i := range recs {
		r := &recs[i]
		expires := r.Time.Add(ttl)
		left := expires.Sub(now)
		if left <= 0 {
			continue
		}
		day := dayOf(r.Time)
		b := batches[day]
		if b == nil {
			b = s.session.NewBatch(gocql.UnloggedBatch)
			batches[day] = b
			days = append(days, day)
		}
		b.Query(s.q.insertAudit, day, r.Time.UnixNano(), nextAuditSeq(), auditWriter, expires.UnixMicro(), codec.AppendAudit(nil, r), eventTTL(left))
	}
	if len(days) == 0 {
		return nil
	}
	slices.Sort(days)
	reg := s.session.NewBatch(gocql.UnloggedBatch)
	for _, d := range days {
		if !s.knownDays.known(d, now) {
			reg.Query(s.q.addAuditDay, d)
		}
	}
	if len(reg.Entries) > 0 {
		if err := s.session.ExecuteBatch(reg.WithContext(ctx)); err != nil {
			return fmt.Errorf("append audit: %w", s.classify(ctx, err))
		}
		for _, d := range days {
			s.knownDays.add(d)
		}
	}
	err := parallel(ctx, len(days), eventWriteParallism, func(ctx context.Context, i int) error {
		return s.session.ExecuteBatch(batches[days[i]].WithContext(ctx))
	})
	if err != nil {
		return fmt.Errorf("append audit: %w", s.classify(ctx, err))
	}
	return nil
}

// ListAudit returns the unexpired records q selects, oldest first: it
// reads the days from the newest back to q.Since's, each newest first,
// until q.Limit records matched.
func (s *Store) ListAudit(ctx context.Context, q store.AuditQuery) ([]model.AuditRecord, error) {
	if err := codec.CheckAuditQuery(q); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	days, err := s.auditDays(ctx)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	since, sinceDay := int64(math.MinInt64), math.MinInt
	if !q.Since.IsZero() {
		since, sinceDay = q.Since.UnixNano(), dayOf(q.Since)
	}
	now := time.Now().UnixMicro()
	var out []model.AuditRecord
	for _, day := range days { // newest first
		if day < sinceDay || (q.Limit > 0 && len(out) == q.Limit) {
			break
		}
		iter := s.query(ctx, s.q.listAudit, day, since).PageSize(1000).Iter()
		var (
			expires int64
			record  []byte
		)
		for (q.Limit == 0 || len(out) < q.Limit) && iter.Scan(&expires, &record) {
			if expires <= now {
				continue
			}
			r, err := codec.DecodeAudit(record)
			if err != nil {
				iter.Close()
				return nil, fmt.Errorf("list audit: day %d: %w", day, err)
			}
			if q.Name != "" && r.Name != q.Name {
				continue
			}
			out = append(out, r)
		}
		if err := iter.Close(); err != nil {
			return nil, fmt.Errorf("list audit: %w", s.classify(ctx, err))
		}
	}
	slices.Reverse(out)
	return out, nil
}

// auditDays lists the days with records, newest first.
func (s *Store) auditDays(ctx context.Context) ([]int, error) {
	iter := s.query(ctx, s.q.listAuditDays).Iter()
	var (
		days []int
		day  int
	)
	for iter.Scan(&day) {
		days = append(days, day)
	}
	return days, s.classify(ctx, iter.Close())
}

// PruneAudit returns 0: Cassandra drops expired records by their TTL. It
// forgets the days before yesterday that have no record left, so that
// ListAudit does not read them again.
func (s *Store) PruneAudit(ctx context.Context) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	days, err := s.auditDays(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	yesterday := dayOf(time.Now()) - 1
	for _, day := range days {
		if day >= yesterday {
			continue // a day still written to
		}
		var t int64
		err := s.query(ctx, s.q.anyAudit, day).Scan(&t)
		if err != nil && !errors.Is(err, gocql.ErrNotFound) {
			return 0, fmt.Errorf("prune audit: %w", s.classify(ctx, err))
		}
		if err != nil {
			if err := s.query(ctx, s.q.deleteAuditDay, day).Exec(); err != nil {
				return 0, fmt.Errorf("prune audit: %w", s.classify(ctx, err))
			}
		}
	}
	return 0, nil
}
