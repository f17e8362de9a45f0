package harness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cassandraNode is a single Cassandra node the small-jobs sitting started
// itself with deploy/cassandra/cassandra.sh, on free loopback ports in a
// directory of its own, and stops once its runs are done. Its process's
// CPU time and its own request counters (read over JMX with nodetool) say
// what a run cost the node.
type cassandraNode struct {
	script  string
	dir     string
	addr    string // CQL, host:port
	durable bool
	pid     int
}

// startCassandraNode starts a fresh node in dir: --clean, on a free CQL,
// storage and JMX port of 127.0.0.1, with --durable when asked.
func startCassandraNode(ctx context.Context, script, dir string, durable bool) (*cassandraNode, error) {
	ports := make([]string, 3)
	for i := range ports {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		_, ports[i], _ = net.SplitHostPort(a)
	}
	n := &cassandraNode{script: script, dir: dir, addr: "127.0.0.1:" + ports[0], durable: durable}
	args := []string{"start", "--dir", dir, "--port", ports[0], "--storage-port", ports[1], "--jmx-port", ports[2], "--clean"}
	if durable {
		args = append(args, "--durable")
	}
	if out, err := n.run(ctx, args...); err != nil {
		n.stop()
		return nil, fmt.Errorf("cassandra.sh start: %w: %s", err, lastLines(out, 5))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "cassandra.pid"))
	if err != nil {
		n.stop()
		return nil, fmt.Errorf("cassandra node pid: %w", err)
	}
	if n.pid, err = strconv.Atoi(strings.TrimSpace(string(raw))); err != nil {
		n.stop()
		return nil, fmt.Errorf("cassandra node pid %q: %w", raw, err)
	}
	return n, nil
}

// run runs cassandra.sh with args, returning its combined output.
func (n *cassandraNode) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, n.script, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// stop kills the node (its data is thrown away) and removes its directory.
func (n *cassandraNode) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = n.run(ctx, "stop", "--dir", n.dir, "--kill")
	_ = os.RemoveAll(n.dir)
}

// nodeCounters is what a node has done so far: its process's CPU time and
// the client requests it coordinated, from Cassandra's own ClientRequest
// metrics: conditional writes (each one Paxos round), plain writes (a
// batch counts once) and reads.
type nodeCounters struct {
	CPUSeconds float64
	CASWrites  int64
	Writes     int64
	Reads      int64
}

// sub is what happened between then and c.
func (c nodeCounters) sub(then nodeCounters) nodeCounters {
	return nodeCounters{CPUSeconds: c.CPUSeconds - then.CPUSeconds, CASWrites: c.CASWrites - then.CASWrites,
		Writes: c.Writes - then.Writes, Reads: c.Reads - then.Reads}
}

// counters reads the node's CPU time and request counts (nodetool sjk mx
// over the node's JMX port: the counts of the CASWrite, Write and Read
// ClientRequest latency metrics).
func (n *cassandraNode) counters(ctx context.Context) (nodeCounters, error) {
	c := nodeCounters{CPUSeconds: processCPUSeconds(n.pid)}
	out, err := n.run(ctx, "nodetool", "--dir", n.dir, "--", "sjk", "mx", "-all", "-mg", "-f", "Count",
		"-b", "org.apache.cassandra.metrics:type=ClientRequest,scope=*,name=Latency")
	if err != nil {
		return c, fmt.Errorf("nodetool sjk mx: %w: %s", err, lastLines(out, 3))
	}
	// Each bean's name on a line, its Count on the next.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	found := 0
	for i := 0; i+1 < len(lines); i++ {
		name := strings.TrimSpace(lines[i])
		var into *int64
		switch {
		case strings.Contains(name, "scope=CASWrite,"):
			into = &c.CASWrites
		case strings.Contains(name, "scope=Write,"):
			into = &c.Writes
		case strings.Contains(name, "scope=Read,"):
			into = &c.Reads
		default:
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(lines[i+1]), 10, 64)
		if err != nil {
			return c, fmt.Errorf("nodetool sjk mx: %s: %q is not a count", name, lines[i+1])
		}
		*into = v
		found++
		i++
	}
	if found != 3 {
		return c, fmt.Errorf("nodetool sjk mx: CASWrite, Write and Read counts not found in %q", lastLines(out, 6))
	}
	return c, nil
}

// processCPUSeconds is the CPU time (user and system) process pid has
// used so far, from /proc/pid/stat; 0 when it cannot be read.
func processCPUSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which is in parentheses): utime and
	// stime are the 14th and 15th fields of the whole line.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // clock ticks, USER_HZ = 100
}

// lastLines is the last n lines of out, trimmed, for an error message.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
