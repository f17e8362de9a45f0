package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/tests/testkit"
	"google.golang.org/protobuf/encoding/protojson"
)

// httpLevel is what clients calling one route side by side measured.
type httpLevel struct {
	ok, shed, failed int
	lat              []time.Duration // of the calls that succeeded, sorted
	seconds          float64
	ids              []string // created jobs
	firstErr         string
}

func (l *httpLevel) rate() float64 { return float64(l.ok) / max(l.seconds, 1e-9) }

// callHTTP runs n clients, each on its own keep-alive connection, calling
// one route as fast as it answers for d: a client told to wait (429)
// waits the Retry-After the server gives, as the CLI does. body(i, k) is
// the k-th request body of client i (nil: a GET).
func callHTTP(ctx context.Context, base, path string, n int, d time.Duration, body func(i, k int) []byte) httpLevel {
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	auth := testkit.DevHeader(strings.TrimPrefix(base, "http://"))
	var (
		mu  sync.Mutex
		out httpLevel
		wg  sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine httpLevel
			for k := 0; ctx.Err() == nil; k++ {
				method, b := "GET", body(i, k)
				var rd io.Reader
				if b != nil {
					method, rd = "POST", bytes.NewReader(b)
				}
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), method, base+path, rd)
				if b != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					mine.failed++
					if mine.firstErr == "" {
						mine.firstErr = err.Error()
					}
					continue
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat := time.Since(t0)
				switch {
				case resp.StatusCode == http.StatusOK:
					if t0.Sub(start) >= d {
						continue // answered after the level's time: not counted
					}
					mine.ok++
					mine.lat = append(mine.lat, lat)
					if b != nil {
						var created struct {
							Job struct {
								ID string `json:"id"`
							} `json:"job"`
						}
						if json.Unmarshal(raw, &created) == nil && created.Job.ID != "" {
							mine.ids = append(mine.ids, created.Job.ID)
						}
					}
				case resp.StatusCode == http.StatusTooManyRequests:
					mine.shed++
					wait := time.Second
					if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
						wait = time.Duration(s) * time.Second
					}
					select {
					case <-ctx.Done():
					case <-time.After(wait):
					}
				default:
					mine.failed++
					if mine.firstErr == "" {
						mine.firstErr = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(raw))
					}
				}
			}
			mu.Lock()
			out.ok += mine.ok
			out.shed += mine.shed
			out.failed += mine.failed
			out.lat = append(out.lat, mine.lat...)
			out.ids = append(out.ids, mine.ids...)
			if out.firstErr == "" {
				out.firstErr = mine.firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	out.seconds = d.Seconds()
	out.lat = sortedDurations(out.lat)
	return out
}

// runSingle creates single-task jobs with CreateJob over HTTP/JSON from the
// size's clients for its duration, after the same clients called a route
// that does nothing (GET /healthz) for as long: the baseline.
func runSingle(ctx context.Context, s *Scenario, w *Workload, z Size, srv *devServer, opts apiOptions, f *APIFigures) {
	f.Call = "CreateJob (HTTP/JSON)"
	d := time.Duration(z.APIDuration)
	base := "http://" + srv.addr

	health := callHTTP(ctx, base, "/healthz", z.Clients, d, func(int, int) []byte { return nil })
	f.Baseline = fmt.Sprintf("GET /healthz, %d clients", z.Clients)
	f.BaselinePerSec = health.rate()
	f.BaselineP99Ms = float64(quantile(health.lat, 0.99)) / 1e6

	// Bodies are encoded before the clock starts: the clients share the
	// machine with the server.
	bodies := make([][]byte, len(w.Jobs))
	for j := range w.Jobs {
		b, err := protojson.Marshal(apiSpec(w, j, w.Jobs[j].Name))
		if err != nil {
			f.Err = err.Error()
			return
		}
		bodies[j] = b
	}
	cpu0 := srv.cpuSeconds()
	endProfile := profileDuring(ctx, srv, opts, s.Name, d)
	create := callHTTP(ctx, base, "/v1/jobs", z.Clients, d, func(i, k int) []byte {
		return bodies[(i+k*z.Clients)%len(bodies)]
	})
	cpu := srv.cpuSeconds() - cpu0
	endProfile()
	f.Jobs, f.Seconds = len(create.ids), create.seconds
	f.PerSec = create.rate()
	f.P50Ms = float64(quantile(create.lat, 0.50)) / 1e6
	f.P99Ms = float64(quantile(create.lat, 0.99)) / 1e6
	f.Errors = create.failed + health.failed
	if total := create.ok + create.shed; total > 0 {
		f.Shed = float64(create.shed) / float64(total)
	}
	if f.BaselinePerSec > 0 {
		f.Ratio = f.PerSec / f.BaselinePerSec
	}
	if create.ok > 0 {
		f.ServerCPUPerJobUs = cpu / float64(create.ok) * 1e6
	}
	if create.firstErr != "" && f.Err == "" && f.Errors > 0 {
		f.Err = "first failure: " + create.firstErr
	}
	if health.firstErr != "" && f.Err == "" && health.failed > 0 {
		f.Err = "healthz: " + health.firstErr
	}

	// No acknowledgement lost, every task placed: every created job is
	// listed, and its task runs (within the budget).
	jobs := pb.NewJobServiceClient(srv.conn)
	deadline := time.Now().Add(max(time.Duration(z.APIBudget), 30*time.Second))
	for {
		listed, err := listRunning(ctx, jobs)
		if err != nil {
			f.Err = "list: " + err.Error()
			return
		}
		f.Lost, f.Running = 0, 0
		for _, id := range create.ids {
			running, ok := listed[id]
			if !ok {
				f.Lost++
			}
			if running {
				f.Running++
			}
		}
		if f.Running == len(create.ids) || f.Lost > 0 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.TimedOut = true
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
