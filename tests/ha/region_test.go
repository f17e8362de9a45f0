package ha

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// regionSpec is a region of several `peloton server` members on one
// Cassandra keyspace, as the HA tests start it.
type regionSpec struct {
	members   int
	cassandra string // a contact point, or several joined by commas
	// replication is the keyspace's replication when it is created
	// (empty: the server's default).
	replication string
	keyspace    string
	sim         string // the simulated hosts, a hosts: entry
	extra       string // more config lines: the ha section
	// bins is the binary of each member; a missing or empty one runs the
	// binary built from this tree.
	bins []string
}

// startRegion writes each member's config and starts the members; the
// test's cleanups stop them, printing their last lines if it failed.
func startRegion(t *testing.T, spec regionSpec) []*member {
	t.Helper()
	dir := t.TempDir()
	var members []*member
	for i := 0; i < spec.members; i++ {
		m := newMember(t, fmt.Sprintf("m%d", i))
		if i < len(spec.bins) {
			m.bin = spec.bins[i]
		}
		m.config = filepath.Join(dir, m.name+".yaml")
		hosts := strings.Split(spec.cassandra, ",")
		for i, h := range hosts {
			hosts[i] = fmt.Sprintf("%q", h)
		}
		replication := ""
		if spec.replication != "" {
			replication = fmt.Sprintf(", replication: %q", spec.replication)
		}
		cfg := fmt.Sprintf(`region: r
addr: %s
dataDir: %s
hosts: [%q]
store: {kind: cassandra, cassandra: {hosts: [%s], keyspace: %s, migrate: true%s}}
%s
`, m.addr, filepath.Join(dir, m.name), spec.sim, strings.Join(hosts, ", "), spec.keyspace, replication, spec.extra)
		if err := os.WriteFile(m.config, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		m.start()
		members = append(members, m)
	}
	return members
}

// leading reports whether the member's current process leads the region:
// it logged more terms begun than ended.
func (m *member) leading() bool {
	l := m.log()
	return strings.Count(l, "leading the region's shard") > strings.Count(l, "stopped leading")
}

// healthy reports whether the member answers /healthz with 200.
func (m *member) healthy() bool { return testkit.Healthy(http.DefaultClient, m.URL) }

// alive reports whether the member's process has not exited.
func (m *member) alive() bool { return !m.proc.Exited() }
