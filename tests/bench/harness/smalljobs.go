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
)

// Small jobs: one `peloton server` (the production role, configured by a
// file) with sim hosts, and N single-task jobs created over HTTP/JSON by
// concurrent clients, one CreateJob each (POST /v1/jobs, the spec as body), until every job SUCCEEDED. Run
// once per store: the embedded one, then each Cassandra node given, so
// that a Cassandra figure is quoted as a ratio of the embedded figure of
// the same sitting.

// SmallJobsStore is a store the small-jobs runs use: "embedded", or a
// Cassandra node (Cassandra: its CQL address).
type SmallJobsStore struct {
	Name      string
	Cassandra string
}

// SmallJobsConfig is one sitting of small-jobs runs.
type SmallJobsConfig struct {
	Bin     string
	Dir     string
	Jobs    int
	Clients int
	Hosts   int
	Stores  []SmallJobsStore
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
	Err           string
}

// RunSmallJobs runs the sitting, the stores in the order given.
func RunSmallJobs(ctx context.Context, c SmallJobsConfig, out io.Writer) []SmallJobsFigures {
	var figs []SmallJobsFigures
	var base float64
	for i, st := range c.Stores {
		dir := filepath.Join(c.Dir, fmt.Sprintf("%d-%s", i, st.Name))
		f := runSmallJobs(ctx, c, st, dir)
		if st.Cassandra == "" && base == 0 {
			base = f.JobsPerSec
		}
		if base > 0 {
			f.Ratio = f.JobsPerSec / base
		}
		fmt.Fprintf(out, "small-jobs %-20s %5d jobs, %d clients: %7.0f creates/s (p50 %.1fms, p99 %.1fms), all SUCCEEDED in %6.2fs = %7.0f jobs/s end to end, %.2fx embedded; errors %d %s%s\n",
			f.Store, f.Jobs, c.Clients, f.CreatesPerSec, f.P50Ms, f.P99Ms, f.DoneSeconds, f.JobsPerSec, f.Ratio, f.Errors, f.FirstErr, f.Err)
		figs = append(figs, f)
	}
	return figs
}

func runSmallJobs(ctx context.Context, c SmallJobsConfig, st SmallJobsStore, dir string) SmallJobsFigures {
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
	start := time.Now()
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
