package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/tests/testkit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// devServer is a `peloton dev` process the API scenarios call, with sim
// hosts and its store in a temporary directory.
type devServer struct {
	cmd       *exec.Cmd
	addr      string
	debugAddr string
	dir       string
	logPath   string
	done      chan error
	conn      *grpc.ClientConn
}

// freeAddr is a loopback address free at the time of the call.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// simHostsFlag is the --hosts value that makes the workload's hosts: one
// shape, zones cycled over the hosts as the workload labels them.
func simHostsFlag(s *Scenario, n int) string {
	shape := s.Hosts.Shapes[0]
	flag := fmt.Sprintf("sim:%s,hosts=%d,cpu=%g,mem=%g,duration=24h", Cluster, n, shape.CPU, shape.MemMB)
	if zones := s.Hosts.Labels["zone"]; len(zones) > 0 {
		flag += ",zones=" + strings.Join(zones, "|")
	}
	return flag
}

// startDevServer starts bin as `peloton dev` with the workload's hosts
// in dir and waits until it is healthy and knows every host.
func startDevServer(ctx context.Context, bin, dir string, s *Scenario, w *Workload, extra ...string) (*devServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	debugAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"dev", "--addr", addr, "--data-dir", filepath.Join(dir, "data"), "--hosts", simHostsFlag(s, len(w.Hosts)),
		"--log-level", "warn", "--debug-addr", debugAddr}, extra...)
	return launch(ctx, bin, dir, addr, debugAddr, args, time.Minute, len(w.Hosts))
}

// launch starts bin with args, its output in dir/server.log, and waits
// until it is healthy within healthyWithin and knows hosts hosts.
func launch(ctx context.Context, bin, dir, addr, debugAddr string, args []string, healthyWithin time.Duration, hosts int) (*devServer, error) {
	d := &devServer{addr: addr, debugAddr: debugAddr, dir: dir, logPath: filepath.Join(dir, "server.log"), done: make(chan error, 1)}
	d.cmd = exec.Command(bin, args...)
	logf, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { d.done <- d.cmd.Wait(); logf.Close() }()
	fail := func(err error) (*devServer, error) {
		d.stop()
		return nil, fmt.Errorf("%w (server log: %s)", err, d.logTail())
	}
	if err := d.waitHealthy(ctx, healthyWithin); err != nil {
		return fail(err)
	}
	d.conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), testkit.DevCredentials(addr),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		return fail(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := pb.NewHostServiceClient(d.conn).ListHosts(ctx, &pb.ListHostsRequest{})
		if err == nil && len(resp.GetHosts()) >= hosts {
			return d, nil
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("the server knows %d of %d hosts after a minute (%v)", len(resp.GetHosts()), hosts, err))
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (d *devServer) waitHealthy(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get("http://" + d.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-d.done:
			d.done <- err
			return fmt.Errorf("the dev server exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the dev server is not healthy after %s", limit)
		}
	}
}

// logTail is the end of the server's log.
func (d *devServer) logTail() string {
	b, _ := os.ReadFile(d.logPath)
	return testkit.LastLines(strings.TrimSpace(string(b)), 10)
}

// rssMiB is the server's resident memory.
func (d *devServer) rssMiB() float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
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

// cpuSeconds is the CPU time the server has used so far.
func (d *devServer) cpuSeconds() float64 { return processCPUSeconds(d.cmd.Process.Pid) }

// profile writes a CPU profile of the next d of the server to path; it
// returns when the profile is written (run it beside the measured work).
func (d *devServer) profile(ctx context.Context, dur time.Duration, path string) error {
	secs := max(int(dur.Seconds()), 1)
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", d.debugAddr, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	return errors.Join(err, f.Close())
}

// stop ends the server as Ctrl-C would, and kills it after 20s.
func (d *devServer) stop() {
	if d.conn != nil {
		d.conn.Close()
	}
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}
