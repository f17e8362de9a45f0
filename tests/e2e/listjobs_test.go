package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// peloton job list --search and --order newest, through the binary: the
// server filters by part of the name and sorts newest first; a bad order
// is refused naming the flag.
func TestJobListSearchAndOrder(t *testing.T) {
	s := startDev(t, filepath.Join(t.TempDir(), "data"))
	var made []string
	for _, name := range []string{"alpha-one", "beta-two", "ALPHA-three"} {
		spec := filepath.Join(t.TempDir(), name+".yaml")
		body := "name: " + name + "\ninstances: 1\ntask:\n  command: sim\n  resources: {cpu: 0.1, memMb: 16}\n"
		if err := os.WriteFile(spec, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		made = append(made, strings.TrimSpace(s.MustCLI("job", "create", "-f", spec)))
	}
	var resp struct {
		Jobs []struct {
			ID   string `json:"id"`
			Spec struct {
				Name string `json:"name"`
			} `json:"spec"`
		} `json:"jobs"`
	}
	out := s.MustCLI("-o", "json", "job", "list", "--search", "alpha", "--order", "newest")
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("job list -o json: %v\n%s", err, out)
	}
	var names []string
	for _, j := range resp.Jobs {
		names = append(names, j.Spec.Name)
	}
	if strings.Join(names, ",") != "ALPHA-three,alpha-one" {
		t.Fatalf("job list --search alpha --order newest: %v, want ALPHA-three then alpha-one (made %v)", names, made)
	}
	r := s.CLI("job", "list", "--order", "sideways")
	if r.Code == 0 || !strings.Contains(r.Stderr, "--order") {
		t.Fatalf("job list --order sideways: exit %d, stderr %q", r.Code, r.Stderr)
	}
}
