package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With auth.policySource: store, the policy file is in force until an
// admin sets one through the API (`peloton auth policy set -f`); the set
// policy is in force at once, survives a restart (the file no longer
// counts), is audited, and only admins may set it.
func TestPolicyKeptInTheStore(t *testing.T) {
	pki, toks := lab(t, []string{"east"}, nil, []string{"root", "eve"}, "bindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [eve], role: viewer}\n")
	east := startRegionAuth(t, pki, "east", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "policySource: store", "")
	root, eve := caller{name: "root", token: toks["root"]}, caller{name: "eve", token: toks["eve"]}

	out, code := east.cli(root, "auth", "policy", "get")
	if code != 0 || !strings.Contains(out, "# source: file "+filepath.Join(pki, "policy.yaml")) || !strings.Contains(out, "viewer") {
		t.Fatalf("policy get before any set (exit %d):\n%s", code, out)
	}
	if out, code := east.cli(eve, "auth", "can-i", "create-job", "--pool", "/b"); code != 7 {
		t.Fatalf("eve can-i create-job /b before: exit %d\n%s", code, out)
	}
	newPolicy := filepath.Join(t.TempDir(), "new.yaml")
	if err := os.WriteFile(newPolicy, []byte("# /b is eve's\nbindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [eve], role: pool-owner, pools: [/b]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := east.cli(eve, "auth", "policy", "set", "-f", newPolicy); code == 0 || !strings.Contains(out, "PermissionDenied") && !strings.Contains(out, "may not") {
		t.Fatalf("eve setting the policy: exit %d\n%s", code, out)
	}
	out, code = east.cli(root, "auth", "policy", "set", "-f", newPolicy)
	if code != 0 || !strings.Contains(out, "# source: store, set by root") || !strings.Contains(out, "# /b is eve's") {
		t.Fatalf("root setting the policy (exit %d):\n%s", code, out)
	}
	if out, code := east.cli(eve, "auth", "can-i", "create-job", "--pool", "/b"); code != 0 {
		t.Fatalf("eve can-i create-job /b after: exit %d\n%s", code, out)
	}
	// A policy that would lock root out is refused, naming why.
	lockout := filepath.Join(t.TempDir(), "lockout.yaml")
	_ = os.WriteFile(lockout, []byte("bindings:\n  - {subjects: [eve], role: admin}\n"), 0o644)
	if out, code := east.cli(root, "auth", "policy", "set", "-f", lockout); code == 0 || !strings.Contains(out, "takes the admin role from root") {
		t.Fatalf("a lockout policy: exit %d\n%s", code, out)
	}

	// After a restart the stored policy, not the file, is in force.
	east.stop()
	east.start()
	if out, code := east.cli(eve, "auth", "can-i", "create-job", "--pool", "/b"); code != 0 {
		t.Fatalf("eve can-i create-job /b after a restart: exit %d\n%s", code, out)
	}
	out, code = east.cli(root, "audit", "list", "--name", "root")
	if code != 0 || !strings.Contains(out, "set-policy") {
		t.Fatalf("the audit log lacks root's set-policy (exit %d):\n%s", code, out)
	}
	t.Logf("audit:\n%s", out)
}
