package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

// node is a throwaway Cassandra started with deploy/cassandra/cassandra.sh,
// so that a test may stop and start it without disturbing other tests.
type node struct {
	script, dir       string
	port, storagePort int
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startOwnNode(t *testing.T) *node {
	t.Helper()
	script, err := filepath.Abs("../../../deploy/cassandra/cassandra.sh")
	if err != nil {
		t.Fatal(err)
	}
	n := &node{script: script, dir: t.TempDir(), port: freePort(t), storagePort: freePort(t)}
	n.run(t, "start", "--clean")
	t.Cleanup(func() { n.run(t, "stop", "--kill") })
	return n
}

func (n *node) host() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

func (n *node) run(t *testing.T, command string, flags ...string) {
	t.Helper()
	args := []string{command, "--dir", n.dir}
	if command == "start" {
		args = append(args, "--port", fmt.Sprint(n.port), "--storage-port", fmt.Sprint(n.storagePort))
	}
	out, err := exec.Command(n.script, append(args, flags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("cassandra.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestOutageThenRecovery stops Cassandra under an open store: every call
// fails with store.ErrUnavailable naming the host, nothing stored is
// lost or changed, and once Cassandra is back the same store carries on
// without being reopened.
func TestOutageThenRecovery(t *testing.T) {
	testHosts(t) // the Cassandra tests are enabled
	if testing.Short() {
		t.Skip("starts and restarts its own Cassandra node")
	}
	n := startOwnNode(t)
	ctx := context.Background()
	s, err := Open(ctx, Config{
		Hosts: []string{n.host()}, Keyspace: "outage", Migrate: true,
		Timeout: 3 * time.Second, ReconnectInterval: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	job := storetest.FullJob("kept")
	mustNil(t, s.CreateJob(ctx, job))
	tasks := make([]*model.TaskRuntime, 300)
	for i := range tasks {
		tasks[i] = storetest.FullTask(model.TaskID{Job: "kept", Instance: uint32(i * 500)})
	}
	mustNil(t, s.WriteTasks(ctx, tasks))
	want := storetest.Normal(tasks)

	// A graceful stop: the test node keeps its schema tables unsynced
	// (cassandra.sh's start-up shortcut), so a SIGKILL would lose the
	// keyspace definition along with the process; the data tables' own
	// commit log survives either way.
	start := time.Now()
	n.run(t, "stop")
	t.Logf("Cassandra stopped in %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	update := storetest.Normal(tasks[:10])
	for _, task := range update {
		task.State = model.TaskLost
	}
	calls := map[string]error{
		"CreateJob":  s.CreateJob(ctx, storetest.FullJob("new")),
		"UpdateJob":  s.UpdateJob(ctx, storetest.Normal(job)),
		"WriteTasks": s.WriteTasks(ctx, update),
		"PutValue":   kinds.PutValue(ctx, s, "k", []byte("v")),
	}
	_, calls["GetJob"] = s.GetJob(ctx, "kept")
	_, calls["ListTasks"] = s.ListTasks(ctx, "kept")
	_, calls["ListPools"] = kinds.Pools.List(ctx, s)
	t.Logf("GetJob with Cassandra stopped: %v", calls["GetJob"])
	for call, err := range calls {
		if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), n.host()) {
			t.Errorf("%s with Cassandra stopped: %v; want ErrUnavailable naming %s", call, err, n.host())
		}
	}
	for _, task := range update {
		if task.Revision != 1 {
			t.Fatalf("failed write changed %s revision to %d", task.ID, task.Revision)
		}
	}

	t.Logf("%d calls failed in %v", len(calls), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	n.run(t, "start")
	t.Logf("Cassandra answered CQL again after %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := s.GetJob(ctx, "kept")
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("GetJob while Cassandra restarts: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("store did not recover within 90s of Cassandra answering again: %v", err)
		}
		<-tick.C
	}
	t.Logf("the store recovered %v later", time.Since(start).Round(time.Millisecond))
	got, err := s.ListTasks(ctx, "kept")
	mustNil(t, err)
	if len(got) != len(want) {
		t.Fatalf("after restart %d tasks, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Revision != 1 || got[i].State != want[i].State {
			t.Fatalf("task %d after restart: %+v, want %+v", i, got[i], want[i])
		}
	}
	mustNil(t, s.WriteTasks(ctx, update))
	if task, err := s.GetTask(ctx, update[3].ID); err != nil || task.Revision != 2 || task.State != model.TaskLost {
		t.Fatalf("write after recovery: %+v, %v", task, err)
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
