package e2e

import (
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// binary is the peloton binary built once for the whole package.
var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// server is a running `peloton dev`.
type server = testkit.Server

// startDev starts `peloton dev` on dataDir with extra flags and waits until
// it is healthy; it must stop cleanly. Its CLI runs may take 5 minutes
// (commands with --wait).
func startDev(t testing.TB, dataDir string, extra ...string) *server {
	t.Helper()
	return testkit.StartDevWith(t, binary, testkit.ServerOptions{CLIWithin: 5 * time.Minute}, dataDir, extra...)
}

// startPeloton runs the binary with args, a server that listens on addr
// and keeps its files in dataDir, and waits until it is healthy; it must
// stop cleanly.
func startPeloton(t testing.TB, dataDir, addr string, args ...string) *server {
	t.Helper()
	return testkit.StartPeloton(t, binary, testkit.ServerOptions{CLIWithin: 5 * time.Minute}, addr, dataDir, args...)
}

var (
	waitFor  = testkit.WaitFor
	repoFile = testkit.RepoPath
)
