// Command overload measures how a dev cluster holds up as concurrent
// clients grow: at each level (1, 8, 32, 128, 512 clients by default) the
// clients call the API as fast as they can for a while, and it prints the
// throughput of accepted calls, their p50 and p99 latency, the fraction
// shed (ResourceExhausted), and the server's resident memory. Level 1 is
// the baseline the other levels' figures are compared with. Every job a
// create acknowledged is looked up at the end: none may be lost.
//
//	make bench-overload
//	go run ./tests/bench/overload -levels 1,8,32,128,512 -duration 5s -in-flight 64
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/tests/testkit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-overload:", err)
		os.Exit(1)
	}
}

type options struct {
	levels   []int
	duration time.Duration
	inFlight int
	bin      string
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("overload", flag.ContinueOnError)
	levels := fs.String("levels", "1,8,32,128,512", "numbers of concurrent clients, comma-separated")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "how long each level runs")
	fs.IntVar(&o.inFlight, "in-flight", 0, "the server's --limit-in-flight (0: its default)")
	fs.StringVar(&o.bin, "bin", "", "peloton binary (default: build one)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-levels: %q is not a positive number", s)
		}
		o.levels = append(o.levels, n)
	}
	return o, nil
}

func run(args []string, out io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if o.bin == "" {
		bin, cleanup, err := testkit.BuildPeloton()
		if err != nil {
			return err
		}
		defer cleanup()
		o.bin = bin
	}
	srv, err := startDev(o)
	if err != nil {
		return err
	}
	defer srv.stop()
	conn, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()), testkit.DevCredentials(srv.addr))
	if err != nil {
		return err
	}
	defer conn.Close()
	jobs := pb.NewJobServiceClient(conn)

	ctx := context.Background()
	seed, err := jobs.CreateJob(ctx, &pb.CreateJobRequest{Spec: benchSpec()})
	if err != nil {
		return fmt.Errorf("seed job: %w", err)
	}
	fmt.Fprintf(out, "overload benchmark: dev cluster (sim hosts), in-flight limit %s, %s per level, 2%% creates / 49%% gets / 49%% lists of 20; shed clients wait the server's retry hint\n\n",
		orDefault(o.inFlight), o.duration)
	fmt.Fprintf(out, "%8s %10s %10s %10s %10s %8s %10s %9s\n", "clients", "calls/s", "p50", "p99", "p99/base", "shed", "errors", "rss MiB")
	var base time.Duration
	var acked []string
	for _, n := range o.levels {
		r, err := level(ctx, srv.addr, seed.GetJob().GetId(), n, o.duration)
		if err != nil {
			return err
		}
		acked = append(acked, r.created...)
		if base == 0 {
			base = r.p99
		}
		fmt.Fprintf(out, "%8d %10.0f %10s %10s %10.1f %7.1f%% %10d %9.0f\n", n, r.rate, r.p50.Round(10*time.Microsecond),
			r.p99.Round(10*time.Microsecond), float64(r.p99)/float64(max(base, 1)), 100*r.shedFraction, r.errors, srv.rssMiB())
		if r.firstErr != nil {
			fmt.Fprintf(out, "         first error: %v\n", r.firstErr)
		}
	}
	lost := 0
	for _, id := range acked {
		for attempt := 0; ; attempt++ {
			_, err := jobs.GetJob(ctx, &pb.GetJobRequest{Id: id})
			if err == nil {
				break
			}
			if status.Code(err) == codes.ResourceExhausted && attempt < 20 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			lost++
			break
		}
	}
	fmt.Fprintf(out, "\n%d jobs acknowledged, %d lost\n", len(acked), lost)
	if lost > 0 {
		return fmt.Errorf("%d acknowledged jobs lost", lost)
	}
	return nil
}

func orDefault(n int) string {
	if n == 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

func benchSpec() *pb.JobSpec {
	return &pb.JobSpec{Name: "overload", Instances: 1, Labels: map[string]string{"bench": "overload"},
		Task: &pb.TaskSpec{Command: "sleep", Env: map[string]string{"PELOTON_SIM_DURATION": "100ms"},
			Resources: &pb.Resources{Cpu: 0.01, MemMb: 1}}}
}

type levelResult struct {
	rate         float64
	p50, p99     time.Duration
	shedFraction float64
	errors       int
	firstErr     error
	created      []string
}

// level runs n clients, each on its own connection, for d and gathers
// their figures.
func level(ctx context.Context, addr, seed string, n int, d time.Duration) (levelResult, error) {
	clients := make([]pb.JobServiceClient, n)
	for i := range clients {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), testkit.DevCredentials(addr))
		if err != nil {
			return levelResult{}, err
		}
		defer conn.Close()
		clients[i] = pb.NewJobServiceClient(conn)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var shed, failed int
	var created []string
	var wg sync.WaitGroup
	var firstErr atomic.Pointer[error]
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs := clients[i]
			rng := rand.New(rand.NewPCG(uint64(i), uint64(n)))
			var mine []time.Duration
			var myShed, myFailed int
			var myCreated []string
			deadline, _ := ctx.Deadline()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				start := time.Now()
				var err error
				switch p := rng.IntN(100); {
				case p < 2:
					var resp *pb.CreateJobResponse
					if resp, err = jobs.CreateJob(ctx, &pb.CreateJobRequest{Spec: benchSpec()}); err == nil {
						myCreated = append(myCreated, resp.GetJob().GetId())
					}
				case p < 51:
					_, err = jobs.GetJob(ctx, &pb.GetJobRequest{Id: seed})
				default:
					_, err = jobs.ListJobs(ctx, &pb.ListJobsRequest{Limit: 20})
				}
				switch {
				case err == nil:
					mine = append(mine, time.Since(start))
				case status.Code(err) == codes.ResourceExhausted:
					// A client as the CLI is one: it waits as told.
					myShed++
					if hint, ok := gateway.RetryDelay(err); ok {
						select {
						case <-time.After(hint):
						case <-ctx.Done():
						}
					}
				case ctx.Err() != nil, status.Code(err) == codes.DeadlineExceeded:
					// The level's time is up (gRPC may say so before ctx does).
				default:
					myFailed++
					firstErr.CompareAndSwap(nil, &err)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			shed += myShed
			failed += myFailed
			created = append(created, myCreated...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	r := levelResult{errors: failed, created: created, rate: float64(len(lat)) / d.Seconds()}
	if e := firstErr.Load(); e != nil {
		r.firstErr = *e
	}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	if total := len(lat) + shed; total > 0 {
		r.shedFraction = float64(shed) / float64(total)
	}
	return r, nil
}

type devServer struct {
	cmd  *exec.Cmd
	addr string
	dir  string
	done chan error
}

func startDev(o options) (*devServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	dir, err := os.MkdirTemp("", "peloton-overload")
	if err != nil {
		return nil, err
	}
	args := []string{"dev", "--addr", addr, "--data-dir", filepath.Join(dir, "data"), "--hosts", "sim", "--sim-hosts", "50", "--log-level", "warn"}
	if o.inFlight > 0 {
		args = append(args, "--limit-in-flight", strconv.Itoa(o.inFlight))
	}
	cmd := exec.Command(o.bin, args...)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &devServer{cmd: cmd, addr: addr, dir: dir, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("the dev cluster exited: %v (log in %s)", err, dir)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("the dev cluster did not become ready in 30s")
		}
	}
}

// rssMiB is the server's resident memory, from /proc.
func (s *devServer) rssMiB() float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func (s *devServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	os.RemoveAll(s.dir)
}
