package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
)

// Small jobs: one `peloton server` (the production role, configured by a
// file) with sim hosts, and N single-task jobs created over HTTP/JSON by
// concurrent clients, one CreateJob each (POST /v1/jobs, the spec as body), until every job SUCCEEDED. Run
// once per store: the embedded one, then each Cassandra node given, so
// that a Cassandra figure is quoted as a ratio of the embedded figure of
// the same sitting. Each run is followed by the store's own ceiling for
// the same records (smallceiling.go), written from this process through
// the store package on a fresh store of the same kind (a new keyspace of
// the same node), and the end-to-end figure is quoted as a ratio of it
// too. A node the sitting starts itself (Start) is measured as well: its
// CPU time and its conditional and plain writes over each part.

// SmallJobsStore is a store the small-jobs runs use: "embedded", or a
// Cassandra node: Cassandra is its CQL address, or empty with Start set
// to start a fresh node (with Durable, one that syncs its commit log
// before acknowledging a write) for this store's runs and stop it after.
type SmallJobsStore struct {
	Name      string
	Cassandra string
	Start     bool
	Durable   bool
}

// IsCassandra reports whether the store is a Cassandra node.
func (s SmallJobsStore) IsCassandra() bool { return s.Cassandra != "" || s.Start }

// SmallJobsConfig is one sitting of small-jobs runs.
type SmallJobsConfig struct {
	Bin     string
	Dir     string
	Jobs    int
	Clients int
	Hosts   int
	Stores  []SmallJobsStore
	// CassandraScript is deploy/cassandra/cassandra.sh, which starts the
	// nodes of stores with Start.
	CassandraScript string
	// ProfileDir, when set, receives each run's goroutine profile taken
	// half way through the creates (<store>-goroutine.prof).
	ProfileDir string
}

// SmallJobsFigures is what one run measured.
type SmallJobsFigures struct {
	Store         string
	Jobs          int
	Created       int
	Errors        int
	FirstErr      string
	CreateSeconds float64 // first create sent to last acknowledged
	CreatesPerSec float64
	DoneSeconds   float64 // first create sent to every job SUCCEEDED
	JobsPerSec    float64 // end to end
	P50Ms, P99Ms  float64 // create latency
	Ratio         float64 // JobsPerSec over the embedded run's
	// ServerCPUSeconds is the server's CPU time from the first create to
	// the last job SUCCEEDED.
	ServerCPUSeconds float64
	// The ceiling: the same records written through the store package.
	CeilingSeconds    float64
	CeilingJobsPerSec float64
	CeilingRatio      float64 // JobsPerSec over CeilingJobsPerSec
	// CeilingVsEmbedded is CeilingJobsPerSec over the embedded ceiling's.
	CeilingVsEmbedded float64
	// CeilingClientCPUSeconds is this process's CPU time over the ceiling
	// (the store package's own work, and the Cassandra driver's).
	CeilingClientCPUSeconds float64
	// Node is what a node the sitting started did over the end-to-end run
	// (from the first create to the last job SUCCEEDED), NodeCeiling over
	// the ceiling; zero for other stores.
	Node, NodeCeiling nodeCounters
	Err               string
}

// RunSmallJobs runs the sitting, the stores in the order given.
func RunSmallJobs(ctx context.Context, c SmallJobsConfig, out io.Writer) []SmallJobsFigures {
	var figs []SmallJobsFigures
	var base, baseCeiling float64
	for i, st := range c.Stores {
		dir := filepath.Join(c.Dir, fmt.Sprintf("%d-%s", i, st.Name))
		f := runStore(ctx, c, st, dir)
		if !st.IsCassandra() && base == 0 {
			base, baseCeiling = f.JobsPerSec, f.CeilingJobsPerSec
		}
		if base > 0 {
			f.Ratio = f.JobsPerSec / base
		}
		if baseCeiling > 0 {
			f.CeilingVsEmbedded = f.CeilingJobsPerSec / baseCeiling
		}
		printSmallJobs(out, c, st, f)
		figs = append(figs, f)
	}
	return figs
}

// runStore runs the end-to-end run on one store, then its ceiling,
// starting (and afterwards stopping) the store's node when asked.
func runStore(ctx context.Context, c SmallJobsConfig, st SmallJobsStore, dir string) SmallJobsFigures {
	var node *cassandraNode
	if st.Start {
		n, err := startCassandraNode(ctx, c.CassandraScript, filepath.Join(dir, "cassandra"), st.Durable)
		if err != nil {
			return SmallJobsFigures{Store: st.Name, Jobs: c.Jobs, Err: err.Error()}
		}
		defer n.stop()
		node, st.Cassandra = n, n.addr
	}
	f := runSmallJobs(ctx, c, st, node, dir)
	if f.Err != "" {
		return f
	}
	if err := runCeiling(ctx, c, st, node, dir, &f); err != nil {
		f.Err = "ceiling: " + err.Error()
	}
	return f
}

// span measures what a node did from measure to end (nothing without a
// node).
type span struct {
	node   *cassandraNode
	before nodeCounters
	err    error
}

func measure(ctx context.Context, node *cassandraNode) *span {
	s := &span{node: node}
	if node != nil {
		s.before, s.err = node.counters(ctx)
	}
	return s
}

func (s *span) end(ctx context.Context, into *nodeCounters) error {
	if s.node == nil || s.err != nil {
		return s.err
	}
	after, err := s.node.counters(ctx)
	*into = after.sub(s.before)
	return err
}

// runCeiling writes the ceiling on a fresh store of st's kind (a new
// embedded file in dir, or a new keyspace of st's node) into f.
func runCeiling(ctx context.Context, c SmallJobsConfig, st SmallJobsStore, node *cassandraNode, dir string, f *SmallJobsFigures) error {
	var s ceilingStore
	if st.Cassandra == "" {
		b, err := boltstore.Open(filepath.Join(dir, "ceiling.db"))
		if err != nil {
			return err
		}
		s = b
	} else {
		cs, err := cassandra.Open(ctx, cassandra.Config{Hosts: []string{st.Cassandra},
			Keyspace: fmt.Sprintf("bench_ceiling_%d", time.Now().UnixNano()), Migrate: true})
		if err != nil {
			return err
		}
		s = cs
	}
	defer s.Close()
	sp := measure(ctx, node)
	self := os.Getpid()
	cpu := processCPUSeconds(self)
	d, err := smallJobsCeiling(ctx, s, c.Jobs, c.Clients)
	if err != nil {
		return err
	}
	f.CeilingClientCPUSeconds = processCPUSeconds(self) - cpu
	if err := sp.end(ctx, &f.NodeCeiling); err != nil {
		return err
	}
	f.CeilingSeconds = d.Seconds()
	f.CeilingJobsPerSec = float64(c.Jobs) / d.Seconds()
	f.CeilingRatio = f.JobsPerSec / f.CeilingJobsPerSec
	return nil
}

// printSmallJobs prints one store's figures.
func printSmallJobs(out io.Writer, c SmallJobsConfig, st SmallJobsStore, f SmallJobsFigures) {
	fmt.Fprintf(out, "small-jobs %-20s %5d jobs, %d clients: %7.0f creates/s (p50 %.1fms, p99 %.1fms), all SUCCEEDED in %6.2fs = %7.0f jobs/s end to end, %.2fx embedded; errors %d %s%s\n",
		f.Store, f.Jobs, c.Clients, f.CreatesPerSec, f.P50Ms, f.P99Ms, f.DoneSeconds, f.JobsPerSec, f.Ratio, f.Errors, f.FirstErr, f.Err)
	if f.CeilingJobsPerSec == 0 {
		return
	}
	fmt.Fprintf(out, "  %-29s ceiling, the same records through the store package from %d writers: %6.2fs = %7.0f jobs/s (%.2fx embedded's); end to end is %.2fx of it\n",
		"", c.Clients, f.CeilingSeconds, f.CeilingJobsPerSec, f.CeilingVsEmbedded, f.CeilingRatio)
	perJob := func(v float64) float64 { return v / float64(max(f.Jobs, 1)) }
	fmt.Fprintf(out, "  %-29s CPU: server %.1fs (%.2f ms/job) end to end; store package %.1fs (%.2f ms/job) in the ceiling\n",
		"", f.ServerCPUSeconds, 1000*perJob(f.ServerCPUSeconds), f.CeilingClientCPUSeconds, 1000*perJob(f.CeilingClientCPUSeconds))
	if st.Start {
		fmt.Fprintf(out, "  %-29s node (%s): end to end %.1f CPU-s (%.2f ms/job), per job %.1f conditional writes (Paxos rounds), %.1f plain writes, %.1f reads; ceiling %.1f CPU-s (%.2f ms/job), per job %.1f conditional, %.1f plain, %.1f reads\n",
			"", commitLog(st.Durable), f.Node.CPUSeconds, 1000*perJob(f.Node.CPUSeconds), perJob(float64(f.Node.CASWrites)), perJob(float64(f.Node.Writes)), perJob(float64(f.Node.Reads)),
			f.NodeCeiling.CPUSeconds, 1000*perJob(f.NodeCeiling.CPUSeconds), perJob(float64(f.NodeCeiling.CASWrites)), perJob(float64(f.NodeCeiling.Writes)), perJob(float64(f.NodeCeiling.Reads)))
		e2e, ceil := float64(f.Node.CASWrites)/f.DoneSeconds, float64(f.NodeCeiling.CASWrites)/f.CeilingSeconds
		fmt.Fprintf(out, "  %-29s Paxos rounds/s: end to end %.0f, ceiling %.0f: the server drives the node at %.2fx the ceiling's rate of conditional writes\n",
			"", e2e, ceil, e2e/max(ceil, 1e-9))
	}
}

// commitLog names a node's commit log mode.
func commitLog(durable bool) string {
	if durable {
		return "--durable: commit log synced before each acknowledgement"
	}
	return "default periodic commit log"
}

func runSmallJobs(ctx context.Context, c SmallJobsConfig, st SmallJobsStore, node *cassandraNode, dir string) SmallJobsFigures {
	f := SmallJobsFigures{Store: st.Name, Jobs: c.Jobs}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Err = err.Error()
		return f
	}
	srv, err := startPelotonServer(ctx, c.Bin, dir, st, c.Hosts)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	defer srv.stop()

	bodies := make([][]byte, c.Jobs)
	for j := range bodies {
		bodies[j] = []byte(fmt.Sprintf(`{"name":"small-%d","type":"JOB_TYPE_BATCH","instances":1,`+
			`"task":{"command":"true","resources":{"cpu":0.01,"memMb":8,"diskMb":1}}}`, j))
	}
	tr := &http.Transport{MaxIdleConnsPerHost: c.Clients, MaxConnsPerHost: c.Clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		ids      []string
		lat      []time.Duration
		firstErr string
		wg       sync.WaitGroup
	)
	sp := measure(ctx, node)
	start := time.Now()
	cpu := srv.cpuSeconds()
	var profiled atomic.Bool
	for range c.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= c.Jobs || ctx.Err() != nil {
					return
				}
				if j == c.Jobs/2 && c.ProfileDir != "" && profiled.CompareAndSwap(false, true) {
					go srv.goroutines(ctx, filepath.Join(c.ProfileDir, st.Name+"-goroutine.prof"))
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+srv.addr+"/v1/jobs", bytes.NewReader(bodies[j]))
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				var raw []byte
				if err == nil {
					raw, _ = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				d := time.Since(t0)
				var created struct {
					Job struct {
						ID string `json:"id"`
					} `json:"job"`
				}
				mu.Lock()
				switch {
				case err != nil:
					f.Errors++
					firstErr = cmp.Or(firstErr, err.Error())
				case resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &created) != nil || created.Job.ID == "":
					f.Errors++
					firstErr = cmp.Or(firstErr, fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(raw)))
				default:
					ids = append(ids, created.Job.ID)
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	f.CreateSeconds = time.Since(start).Seconds()
	f.Created = len(ids)
	f.CreatesPerSec = float64(len(ids)) / f.CreateSeconds
	lat = sortedDurations(lat)
	f.P50Ms = float64(quantile(lat, 0.5)) / 1e6
	f.P99Ms = float64(quantile(lat, 0.99)) / 1e6
	f.FirstErr = firstErr
	if len(ids) == 0 {
		f.Err = "no job created"
		return f
	}

	jobs := pb.NewJobServiceClient(srv.conn)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		done, err := succeeded(ctx, jobs)
		if err != nil {
			f.Err = "list: " + err.Error()
			return f
		}
		n := 0
		for _, id := range ids {
			if done[id] {
				n++
			}
		}
		if n == len(ids) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.Err = fmt.Sprintf("%d of %d jobs SUCCEEDED after 10 minutes", n, len(ids))
			return f
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.DoneSeconds = time.Since(start).Seconds()
	f.JobsPerSec = float64(len(ids)) / f.DoneSeconds
	f.ServerCPUSeconds = srv.cpuSeconds() - cpu
	if err := sp.end(ctx, &f.Node); err != nil {
		f.Err = err.Error()
	}
	return f
}

// succeeded lists the jobs whose every task SUCCEEDED.
func succeeded(ctx context.Context, jobs pb.JobServiceClient) (map[string]bool, error) {
	return listJobsBy(ctx, jobs, func(j *pb.Job) bool {
		return j.GetStatus().GetTaskStates()["SUCCEEDED"] >= max(j.GetSpec().GetInstances(), 1)
	})
}

// startPelotonServer starts bin as `peloton server --config` on loopback
// (no TLS, no auth) with hosts sim hosts whose tasks run 100ms, on the
// embedded store in dir or on a fresh keyspace of st's Cassandra node.
func startPelotonServer(ctx context.Context, bin, dir string, st SmallJobsStore, hosts int) (*devServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	debugAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	store := "{kind: embedded}"
	if st.Cassandra != "" {
		ks := fmt.Sprintf("bench_small_%d", time.Now().UnixNano())
		store = fmt.Sprintf("{kind: cassandra, cassandra: {hosts: [%q], keyspace: %s, migrate: true}}", st.Cassandra, ks)
	}
	cfg := fmt.Sprintf("region: bench\naddr: %s\ndataDir: %s\nhosts: [\"sim:%s,hosts=%d,cpu=32,mem=131072,duration=100ms\"]\nstore: %s\nlog: {level: warn}\n",
		addr, filepath.Join(dir, "data"), Cluster, hosts, store)
	cfgPath := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return launch(ctx, bin, dir, addr, debugAddr, []string{"server", "--config", cfgPath, "--debug-addr", debugAddr}, 2*time.Minute, hosts)
}

// goroutines writes the server's goroutine profile (debug=1: stacks with
// counts) to path.
func (d *devServer) goroutines(ctx context.Context, path string) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+d.debugAddr+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	_ = os.WriteFile(path, []byte(b.String()), 0o644)
}
