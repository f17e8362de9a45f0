package jobmgr

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// The lock check makes "no store call while an engine lock is held" a rule
// the tests enforce rather than a convention: with it on, every mutex of the
// engine records which goroutine holds it, and the engine's store is wrapped
// so that each call first asks whether the calling goroutine holds any of
// them, and panics naming the call and the locks when it does. A pass or an
// API call that waits for the store with a lock held makes every other
// caller wait for that write too.
//
// It is on in this package's tests and in every process the end-to-end
// suites start (PELOTON_LOCK_CHECK=1); it costs one atomic load per lock
// and store call when off.
var lockCheck atomic.Bool

// LockCheckEnv is the environment variable that turns the lock check on.
const LockCheckEnv = "PELOTON_LOCK_CHECK"

func init() {
	if os.Getenv(LockCheckEnv) == "1" {
		lockCheck.Store(true)
	}
}

// heldLocks maps a goroutine to the names of the engine locks it holds.
var heldLocks = struct {
	sync.Mutex
	by map[uint64][]string
}{by: map[uint64][]string{}}

// goid is the calling goroutine's id, read from its stack header
// ("goroutine 42 [running]:"). Only the lock check uses it.
func goid() uint64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	s := strings.TrimPrefix(string(buf[:n]), "goroutine ")
	var id uint64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		id = id*10 + uint64(s[i]-'0')
	}
	return id
}

func noteHeld(g uint64, name string) {
	heldLocks.Lock()
	heldLocks.by[g] = append(heldLocks.by[g], name)
	heldLocks.Unlock()
}

func noteReleased(g uint64, name string) {
	heldLocks.Lock()
	defer heldLocks.Unlock()
	names := heldLocks.by[g]
	for i := len(names) - 1; i >= 0; i-- {
		if names[i] == name {
			names = append(names[:i], names[i+1:]...)
			break
		}
	}
	if len(names) == 0 {
		delete(heldLocks.by, g)
	} else {
		heldLocks.by[g] = names
	}
}

// locksHeld lists the engine locks the calling goroutine holds.
func locksHeld() []string {
	g := goid()
	heldLocks.Lock()
	defer heldLocks.Unlock()
	return append([]string(nil), heldLocks.by[g]...)
}

// mutex is a sync.Mutex the lock check can see.
type mutex struct {
	mu    sync.Mutex
	name  string
	owner uint64 // goroutine holding it, under the lock check
	// site is where the holder took it, under the lock check.
	site atomic.Pointer[string]
}

// lockWaitReport is how long a caller waits for an engine lock, under
// the lock check, before the wait is reported with where the lock was
// taken: a lock held that long is a lock left held.
const lockWaitReport = 5 * time.Second

func (m *mutex) Lock() {
	if !lockCheck.Load() {
		m.mu.Lock()
		return
	}
	if m.mu.TryLock() {
		m.acquired()
		return
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(lockWaitReport):
			site := m.site.Load()
			if site == nil {
				site = new(string)
			}
			fmt.Fprintf(os.Stderr, "jobmgr: lock check: waited %v for %s, taken at %s\n", lockWaitReport, m.name, *site)
		}
	}()
	m.mu.Lock()
	close(done)
	m.acquired()
}

func (m *mutex) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	m.acquired()
	return true
}

func (m *mutex) acquired() {
	if lockCheck.Load() {
		m.owner = goid()
		noteHeld(m.owner, m.name)
		var pcs [6]uintptr
		n := runtime.Callers(3, pcs[:])
		frames := runtime.CallersFrames(pcs[:n])
		var where []string
		for {
			f, more := frames.Next()
			where = append(where, fmt.Sprintf("%s:%d", f.Function, f.Line))
			if !more {
				break
			}
		}
		site := strings.Join(where, " < ")
		m.site.Store(&site)
	}
}

func (m *mutex) Unlock() {
	if m.owner != 0 {
		noteReleased(m.owner, m.name)
		m.owner = 0
	}
	m.mu.Unlock()
}

// turn makes writers of one kind of record take turns while they read,
// change and store it, so that one does not overwrite another's change
// with an older copy. Only API calls that change such a record take a
// turn, around their store calls; the loop and readers never do, and no
// state lock is held while one is waited for. It is the one lock the lock
// check allows to be held across a store call.
type turn struct{ sync.Mutex }

// rwMutex is a sync.RWMutex the lock check can see.
type rwMutex struct {
	mu   sync.RWMutex
	name string
}

func (m *rwMutex) Lock() {
	m.mu.Lock()
	if lockCheck.Load() {
		noteHeld(goid(), m.name)
	}
}

func (m *rwMutex) Unlock() {
	if lockCheck.Load() {
		noteReleased(goid(), m.name)
	}
	m.mu.Unlock()
}

func (m *rwMutex) RLock() {
	m.mu.RLock()
	if lockCheck.Load() {
		noteHeld(goid(), m.name)
	}
}

func (m *rwMutex) RUnlock() {
	if lockCheck.Load() {
		noteReleased(goid(), m.name)
	}
	m.mu.RUnlock()
}

// checkNoLock panics when the calling goroutine holds an engine lock.
func checkNoLock(call string) {
	if !lockCheck.Load() {
		return
	}
	if held := locksHeld(); len(held) > 0 {
		panic(fmt.Sprintf("jobmgr: store call %s while holding engine lock(s) %s", call, strings.Join(held, ", ")))
	}
}

// checkedStore is the engine's store under the lock check.
type checkedStore struct{ s store.Store }

// guardStore wraps s in the lock check.
func guardStore(s store.Store) store.Store { return checkedStore{s: s} }

// WritePass makes every checked store a PassWriter; one whose store is
// not writes kind by kind (store.WritePass).
func (c checkedStore) WritePass(ctx context.Context, p store.Pass) error {
	checkNoLock("WritePass")
	return store.WritePass(ctx, c.s, p)
}

func (c checkedStore) CreateJob(ctx context.Context, job *model.Job) error {
	checkNoLock("CreateJob")
	return c.s.CreateJob(ctx, job)
}

func (c checkedStore) CreateJobs(ctx context.Context, jobs []*model.Job) []error {
	checkNoLock("CreateJobs")
	return c.s.CreateJobs(ctx, jobs)
}

func (c checkedStore) UpdateJob(ctx context.Context, job *model.Job) error {
	checkNoLock("UpdateJob")
	return c.s.UpdateJob(ctx, job)
}

func (c checkedStore) GetJob(ctx context.Context, id model.JobID) (*model.Job, error) {
	checkNoLock("GetJob")
	return c.s.GetJob(ctx, id)
}

func (c checkedStore) ListJobs(ctx context.Context) ([]*model.Job, error) {
	checkNoLock("ListJobs")
	return c.s.ListJobs(ctx)
}

func (c checkedStore) DeleteJob(ctx context.Context, id model.JobID) error {
	checkNoLock("DeleteJob")
	return c.s.DeleteJob(ctx, id)
}

func (c checkedStore) PutJobConfig(ctx context.Context, id model.JobID, version uint64, spec *model.JobSpec) error {
	checkNoLock("PutJobConfig")
	return c.s.PutJobConfig(ctx, id, version, spec)
}

func (c checkedStore) GetJobConfig(ctx context.Context, id model.JobID, version uint64) (*model.JobSpec, error) {
	checkNoLock("GetJobConfig")
	return c.s.GetJobConfig(ctx, id, version)
}

func (c checkedStore) ListJobConfigVersions(ctx context.Context, id model.JobID) ([]uint64, error) {
	checkNoLock("ListJobConfigVersions")
	return c.s.ListJobConfigVersions(ctx, id)
}

func (c checkedStore) CreateUpdate(ctx context.Context, u *model.Update) error {
	checkNoLock("CreateUpdate")
	return c.s.CreateUpdate(ctx, u)
}

func (c checkedStore) WriteUpdate(ctx context.Context, u *model.Update) error {
	checkNoLock("WriteUpdate")
	return c.s.WriteUpdate(ctx, u)
}

func (c checkedStore) GetUpdate(ctx context.Context, id model.UpdateID) (*model.Update, error) {
	checkNoLock("GetUpdate")
	return c.s.GetUpdate(ctx, id)
}

func (c checkedStore) ListUpdates(ctx context.Context, job model.JobID) ([]*model.Update, error) {
	checkNoLock("ListUpdates")
	return c.s.ListUpdates(ctx, job)
}

func (c checkedStore) AppendEvents(ctx context.Context, events []model.Event, ttl time.Duration) error {
	checkNoLock("AppendEvents")
	return c.s.AppendEvents(ctx, events, ttl)
}

func (c checkedStore) ListEvents(ctx context.Context, q store.EventQuery) ([]model.Event, error) {
	checkNoLock("ListEvents")
	return c.s.ListEvents(ctx, q)
}

func (c checkedStore) PruneEvents(ctx context.Context) (int, error) {
	checkNoLock("PruneEvents")
	return c.s.PruneEvents(ctx)
}

func (c checkedStore) WriteTasks(ctx context.Context, tasks []*model.TaskRuntime) error {
	checkNoLock("WriteTasks")
	return c.s.WriteTasks(ctx, tasks)
}

func (c checkedStore) GetTask(ctx context.Context, id model.TaskID) (*model.TaskRuntime, error) {
	checkNoLock("GetTask")
	return c.s.GetTask(ctx, id)
}

func (c checkedStore) ListTasks(ctx context.Context, job model.JobID) ([]*model.TaskRuntime, error) {
	checkNoLock("ListTasks")
	return c.s.ListTasks(ctx, job)
}

func (c checkedStore) CreateRecord(ctx context.Context, t *store.Table, key string, rec []byte) error {
	checkNoLock("CreateRecord")
	return c.s.CreateRecord(ctx, t, key, rec)
}

func (c checkedStore) SwapRecord(ctx context.Context, t *store.Table, key string, rev uint64, rec []byte) error {
	checkNoLock("SwapRecord")
	return c.s.SwapRecord(ctx, t, key, rev, rec)
}

func (c checkedStore) GetRecord(ctx context.Context, t *store.Table, key string) ([]byte, error) {
	checkNoLock("GetRecord")
	return c.s.GetRecord(ctx, t, key)
}

func (c checkedStore) ListRecords(ctx context.Context, t *store.Table) ([]store.Record, error) {
	checkNoLock("ListRecords")
	return c.s.ListRecords(ctx, t)
}

func (c checkedStore) PutRecords(ctx context.Context, t *store.Table, recs []store.Record) error {
	checkNoLock("PutRecords")
	return c.s.PutRecords(ctx, t, recs)
}

func (c checkedStore) DeleteRecord(ctx context.Context, t *store.Table, key string) error {
	checkNoLock("DeleteRecord")
	return c.s.DeleteRecord(ctx, t, key)
}

func (c checkedStore) Close() error { return c.s.Close() }

// nameLocks names the engine's locks for the lock check's reports.
func (e *Engine) nameLocks() {
	e.mu.name = "Engine.mu"
	e.intake.mu.name = "intake.mu"
	e.poolsMu.name = "Engine.poolsMu"
	e.inboxMu.name = "Engine.inboxMu"
	e.events.mu.name = "broadcaster.mu"
	e.evlog.mu.name = "eventLog.mu"
	e.pending.mu.name = "pendingCount.mu"
	e.hostPools.mu.name = "hostPoolBook.mu"
	e.stats.mu.name = "statBook.mu"
	e.hosts.mu.name = "hostBook.mu"
	e.view.mu.name = "jobsView.mu"
}
