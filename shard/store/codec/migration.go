package codec

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// CheckMigration fails on a nil migration, or one without an id.
func CheckMigration(m *model.Migration) error {
	switch {
	case m == nil:
		return fmt.Errorf("%w: nil migration", store.ErrInvalid)
	case m.ID == "":
		return fmt.Errorf("%w: migration id is empty", store.ErrInvalid)
	}
	return nil
}

// CompareMigrations is the order of ListMigrations, oldest first: by
// create time, then id.
func CompareMigrations(a, b *model.Migration) int {
	return cmp.Or(a.CreateTime.Compare(b.CreateTime), cmp.Compare(a.ID, b.ID))
}

// EncodeMigration returns the stored form of m at revision rev. The id is
// the key and is not repeated in the value.
func EncodeMigration(m *model.Migration, rev uint64) []byte {
	e := encoder{buf: make([]byte, 0, 128+64*len(m.Jobs))}
	e.byte(MigrationRecordVersion)
	e.uvarint(rev)
	e.string(string(m.Job))
	e.string(m.Pool)
	e.string(m.To)
	e.uvarint(uint64(m.BatchSize))
	e.bool(m.Surge)
	e.bool(m.MoveRunning)
	e.bool(m.AllowStateful)
	e.bool(m.Paused)
	e.byte(byte(m.State))
	e.string(m.Message)
	e.time(m.CreateTime)
	e.time(m.CompletionTime)
	e.clusterPolicy(m.PoolClusters)
	e.count(len(m.Jobs), m.Jobs == nil)
	for i := range m.Jobs {
		j := &m.Jobs[i]
		e.string(string(j.Job))
		e.byte(byte(j.Type))
		e.string(j.From)
		e.clusterPolicy(j.Clusters)
		e.uvarint(uint64(j.Instances))
		e.instances(j.Moved)
		e.instances(j.Moving)
		e.count(len(j.Surge), j.Surge == nil)
		keys := make([]uint32, 0, len(j.Surge))
		for k := range j.Surge {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			e.uvarint(uint64(k))
			e.uvarint(uint64(j.Surge[k]))
		}
		e.uvarint(uint64(j.InFlight))
		e.uvarint(uint64(j.MaxUnavailable))
		e.uvarint(uint64(j.SLAMaxUnavailable))
		e.uvarint(uint64(j.Failures))
		e.uvarint(uint64(j.Retries))
		e.bool(j.Done)
		e.string(j.Message)
	}
	return e.buf
}

// instances writes ascending instance numbers as deltas.
func (e *encoder) instances(xs []uint32) {
	e.count(len(xs), xs == nil)
	prev := uint32(0)
	for _, x := range xs {
		e.uvarint(uint64(x - prev))
		prev = x
	}
}

func (d *decoder) instances() []uint32 {
	n, isNil := d.count(1)
	if isNil {
		return nil
	}
	out := make([]uint32, n)
	prev := uint64(0)
	for i := range out {
		prev += d.uvarint()
		if prev > 1<<32-1 {
			d.fail("instance")
			return nil
		}
		out[i] = uint32(prev)
	}
	return out
}

// DecodeMigration decodes a migration EncodeMigration encoded; id is its
// key.
func DecodeMigration(id model.MigrationID, b []byte) (*model.Migration, error) {
	d := decoder{buf: b}
	d.version(MigrationRecordVersion)
	m := &model.Migration{ID: id}
	m.Revision = d.uvarint()
	m.Job = model.JobID(d.string())
	m.Pool = d.string()
	m.To = d.string()
	m.BatchSize = d.uint32()
	m.Surge = d.bool()
	m.MoveRunning = d.bool()
	m.AllowStateful = d.bool()
	m.Paused = d.bool()
	m.State = model.MigrationState(d.byte())
	m.Message = d.string()
	m.CreateTime = d.time()
	m.CompletionTime = d.time()
	m.PoolClusters = d.clusterPolicy()
	// A job takes at least 17 bytes.
	if n, isNil := d.count(17); !isNil {
		m.Jobs = make([]model.MigrationJob, n)
		for i := range m.Jobs {
			j := &m.Jobs[i]
			j.Job = model.JobID(d.string())
			j.Type = model.JobType(d.byte())
			j.From = d.string()
			j.Clusters = d.clusterPolicy()
			j.Instances = d.uint32()
			j.Moved = d.instances()
			j.Moving = d.instances()
			if k, isNil := d.count(2); !isNil {
				j.Surge = make(map[uint32]uint32, k)
				for range k {
					s := d.uint32()
					j.Surge[s] = d.uint32()
				}
			}
			j.InFlight = d.uint32()
			j.MaxUnavailable = d.uint32()
			j.SLAMaxUnavailable = d.uint32()
			j.Failures = d.uint32()
			j.Retries = d.uint32()
			j.Done = d.bool()
			j.Message = d.string()
			if d.err != nil {
				break
			}
		}
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("migration %s: %w", id, err)
	}
	return m, nil
}
