package security

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/internal/testenv"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// startDevCluster starts a `peloton dev` on sim hosts, stopped when the
// test ends, and waits for its token.
func startDevCluster(t *testing.T) *testkit.Server {
	t.Helper()
	d := testkit.StartDev(t, binary, "", "--hosts", "sim", "--sim-hosts", "2", "--log-level", "warn")
	testkit.DevToken(t, d.DataDir)
	return d
}

// TestDevRefusesCallsWithoutItsToken: loopback is no identity. Over HTTP
// and gRPC a call without the dev cluster's token is refused; with it,
// it runs; the token's files are the user's alone; the CLI of the same
// user finds the token with no flag.
func TestDevRefusesCallsWithoutItsToken(t *testing.T) {
	d := startDevCluster(t)
	token := testkit.DevToken(t, d.DataDir)
	bare := testkit.BareClient()

	for _, req := range []struct{ method, path, body string }{
		{"GET", "/v1/jobs", ""},
		{"POST", "/v1/jobs", `{"name":"x","instances":1,"task":{"command":"id","resources":{"cpu":0.1,"memMb":16}}}`},
		{"GET", "/metrics", ""},
	} {
		r, _ := http.NewRequest(req.method, "http://"+d.Addr+req.path, strings.NewReader(req.body))
		r.Header.Set("Content-Type", "application/json")
		resp, err := bare.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d %s, want 401", req.method, req.path, resp.StatusCode, body)
		}
	}
	r, _ := http.NewRequest("GET", "http://"+d.Addr+"/v1/jobs", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	resp, err := bare.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/jobs with the token: %d, want 200", resp.StatusCode)
	}

	conn, err := grpc.NewClient(d.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = pb.NewJobServiceClient(conn).ListJobs(context.Background(), &pb.ListJobsRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC ListJobs without the token: %v, want Unauthenticated", err)
	}

	for _, f := range []string{filepath.Join(d.DataDir, "token"), mustDevTokenFile(t, d.Addr)} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	if st, err := os.Stat(d.DataDir); err != nil || st.Mode().Perm()&0o066 != 0 {
		t.Errorf("data dir %s: %v %v, want none but its user to read or write it", d.DataDir, st.Mode(), err)
	}

	out, err := exec.Command(binary, "--addr", d.Addr, "job", "list").CombinedOutput()
	if err != nil {
		t.Errorf("the CLI of the dev cluster's user, with no token given: %v\n%s", err, out)
	}
}

func mustDevTokenFile(t *testing.T, addr string) string {
	t.Helper()
	if testkit.DevHeader(addr) == "" {
		t.Fatalf("no token kept for the clients of %s", addr)
	}
	path, err := cli.DevTokenFile(addr)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDevRefusesOtherLocalUsers: another user of the machine (nobody)
// reaches loopback too, but cannot read the token, so its calls are
// refused; it used to create jobs that ran as the dev cluster's user.
func TestDevRefusesOtherLocalUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root (to run a command as nobody)", "run the security tests as root")
	}
	d := startDevCluster(t)
	// A copy of the binary nobody may run: the test's own lives in a
	// private temporary directory.
	shared, err := os.MkdirTemp("", "peloton-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(shared, "peloton")
	raw, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(shared, "job.yaml")
	if err := os.WriteFile(spec, []byte("name: intruder\ninstances: 1\ntask:\n  command: id\n  resources: {cpu: 0.1, memMb: 16}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asNobody := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + shared}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := asNobody(bin, "--addr", d.Addr, "job", "create", "-f", spec)
	if err == nil || !strings.Contains(out, "Unauthenticated") && !strings.Contains(out, "no credentials") {
		t.Errorf("nobody creating a job on the dev cluster: %v\n%s\nwant it refused as unauthenticated", err, out)
	}
	out, err = asNobody(bin, "--addr", d.Addr, "job", "list")
	if err == nil {
		t.Errorf("nobody listing jobs on the dev cluster succeeded:\n%s", out)
	}
	for _, f := range []string{filepath.Join(d.DataDir, "token"), filepath.Join(d.DataDir, "store.db"), mustDevTokenFile(t, d.Addr)} {
		if out, err := asNobody("/bin/cat", f); err == nil {
			t.Errorf("nobody read %s:\n%.80s", f, out)
		}
	}
}
