// Package openapi runs Schemathesis, a property-based API tester, against
// the OpenAPI document of a running dev cluster: every operation is called
// with examples, schema-derived edge cases and generated data (valid and
// not); no call may answer 5xx and every answer must match the document.
package openapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/peloton-federated/peloton/internal/testenv"

	"github.com/peloton-federated/peloton/tests/testkit"
)

var binary string

func TestMain(m *testing.M) { testkit.Main(m, &binary) }

// schemathesis finds the st command: $PELOTON_SCHEMATHESIS, else the
// virtualenv .ci/run installs it in.
func schemathesis(t *testing.T) string {
	t.Helper()
	st := os.Getenv("PELOTON_SCHEMATHESIS")
	if st == "" {
		cache := os.Getenv("PELOTON_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "peloton")
		}
		st = filepath.Join(cache, "schemathesis", "bin", "st")
	}
	if _, err := os.Stat(st); err != nil {
		testenv.Missing(t, "schemathesis", "bash tests/env.sh setup installs it into ~/.cache/peloton/schemathesis")
	}
	return st
}

func TestSchemathesis(t *testing.T) {
	st := schemathesis(t)
	d := testkit.StartDev(t, binary, "", "--hosts", "sim", "--sim-hosts", "4", "--log-level", "warn")
	addr := d.Addr

	examples := "25"
	if n := os.Getenv("PELOTON_SCHEMATHESIS_EXAMPLES"); n != "" {
		examples = n
	}
	// Watch streams events until the client goes: a generated call of it
	// never answers, so it is left out. One worker: Hypothesis on Python
	// 3.11 breaks when several threads parse lambdas at once.
	cmd := exec.Command(st, "run", "http://"+addr+"/v1/openapi.json",
		"--checks", "not_a_server_error,response_schema_conformance",
		"--phases", "examples,coverage,fuzzing", "--workers", "1", "--max-examples", examples, "--seed", "20",
		"--exclude-operation-id", "EventService_Watch", "--request-timeout", "10",
		"--generation-database", "none", "--no-color")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	summary := testkit.LastLines(string(out), 30)
	if err != nil {
		t.Fatalf("schemathesis found problems (%v):\n%s", err, string(out))
	}
	t.Logf("schemathesis:\n%s", summary)
}
