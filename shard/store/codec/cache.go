package codec

import (
	"container/list"
	"sync"

	"github.com/peloton-federated/peloton/shard/model"
)

// Defaults of a SpecCache: decoding a spec with an override per instance
// takes tens of milliseconds, and ListJobs decodes every job's spec.
const (
	DefaultSpecCacheEntries = 4096
	// DefaultSpecCacheBytes bounds the encoded size of the cached specs;
	// decoded, they take several times that.
	DefaultSpecCacheBytes = 64 << 20
)

// SpecKey names one stored config: a version of one incarnation of a job
// (an id deleted and created again is a new incarnation, whose version 1
// is another spec).
type SpecKey struct {
	Job         model.JobID
	Incarnation string
	Version     uint64
}

// SpecCache keeps recently decoded configs, least recently used out first.
// Configs never change once stored, so an entry is never stale; Forget
// frees a deleted job's. It hands out and takes in copies, so callers may
// change what they get. It is safe for concurrent use.
type SpecCache struct {
	mu                 sync.Mutex
	maxEntries, budget int
	used               int
	order              *list.List // of *specEntry, most recent first
	entries            map[SpecKey]*list.Element
}

type specEntry struct {
	key  SpecKey
	spec *model.JobSpec
	size int
}

// NewSpecCache returns a cache of at most entries specs of at most bytes
// encoded bytes in all.
func NewSpecCache(entries, bytes int) *SpecCache {
	return &SpecCache{maxEntries: entries, budget: bytes, order: list.New(), entries: map[SpecKey]*list.Element{}}
}

// Get returns a copy of a cached spec.
func (c *SpecCache) Get(k SpecKey) (*model.JobSpec, bool) {
	c.mu.Lock()
	el, ok := c.entries[k]
	var cached *model.JobSpec
	if ok {
		c.order.MoveToFront(el)
		cached = el.Value.(*specEntry).spec
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	spec, err := CloneSpec(cached)
	return spec, err == nil // a decoded spec always clones
}

// Put caches a copy of spec, whose encoding is size bytes long; a spec
// larger than half the budget is not kept.
func (c *SpecCache) Put(k SpecKey, spec *model.JobSpec, size int) {
	if size > c.budget/2 {
		return
	}
	own, err := CloneSpec(spec)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		c.remove(el)
	}
	c.entries[k] = c.order.PushFront(&specEntry{key: k, spec: own, size: size})
	c.used += size
	for c.order.Len() > c.maxEntries || c.used > c.budget {
		c.remove(c.order.Back())
	}
}

// Forget drops every cached config of a job.
func (c *SpecCache) Forget(job model.JobID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*specEntry).key.Job == job {
			c.remove(el)
		}
		el = next
	}
}

func (c *SpecCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*specEntry)
	delete(c.entries, e.key)
	c.used -= e.size
}
