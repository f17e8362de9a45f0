package federation

import "sync"

// StaticDirectory is a fixed set of regions whose health the owner sets:
// the directory of a single region, or of regions in one process.
type StaticDirectory struct {
	local   string
	mu      sync.RWMutex
	regions []Region
}

// NewStaticDirectory returns a directory of the given regions, all alive.
func NewStaticDirectory(local string, regions []Region) *StaticDirectory {
	cp := make([]Region, len(regions))
	copy(cp, regions)
	for i := range cp {
		if cp[i].Health == "" {
			cp[i].Health = "alive"
		}
	}
	return &StaticDirectory{local: local, regions: cp}
}

func (d *StaticDirectory) Local() string { return d.local }

func (d *StaticDirectory) Regions() []Region {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]Region, len(d.regions))
	copy(out, d.regions)
	return out
}

// SetHealth changes the health a region is seen with.
func (d *StaticDirectory) SetHealth(name, health string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.regions {
		if d.regions[i].Name == name {
			d.regions[i].Health = health
		}
	}
}
