package auth

import (
	"strings"
	"testing"
	"time"
)

const testPolicy = `
bindings:
  - subjects: [root]
    role: admin
  - subjects: [ops]
    role: operator
  - subjects: [alice, maps-team]
    role: pool-owner
    pools: [/a, /c/d]
  - subjects: [eve]
    role: viewer
`

func TestDecide(t *testing.T) {
	p, err := ParsePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	tok := func(name string) Identity { return Identity{Name: name, Method: ByToken} }
	cases := []struct {
		id     Identity
		action Action
		pools  []string
		want   string // "allow", "deny", "need"
	}{
		{AnonymousIdentity, ActPublic, nil, "allow"},
		{AnonymousIdentity, ActRead, nil, "deny"},
		{AnonymousIdentity, ActSelf, nil, "deny"},
		{tok("nobody"), ActSelf, nil, "allow"},
		{tok("nobody"), ActRead, nil, "deny"},
		{tok("root"), ActEditPool, []string{"/"}, "allow"},
		{tok("root"), ActReplicate, nil, "allow"},
		{tok("ops"), ActManageHost, nil, "allow"},
		{tok("ops"), ActStopJob, nil, "allow"},
		{tok("ops"), ActEditPool, []string{"/a"}, "deny"},
		{tok("ops"), ActReplicate, nil, "deny"},
		{tok("eve"), ActRead, nil, "allow"},
		{tok("eve"), ActCreateJob, []string{"/a"}, "deny"},
		{tok("eve"), ActReadAudit, nil, "deny"},
		{tok("alice"), ActRead, nil, "allow"},
		{tok("alice"), ActCreateJob, nil, "need"},
		{tok("alice"), ActCreateJob, []string{"/a/x"}, "allow"},
		{tok("alice"), ActCreateJob, []string{"/a"}, "allow"},
		{tok("alice"), ActCreateJob, []string{"/ab"}, "deny"},
		{tok("alice"), ActCreateJob, []string{"/b"}, "deny"},
		{tok("alice"), ActCreateJob, []string{"/c/d/e"}, "allow"},
		{tok("alice"), ActCreateJob, []string{"/c"}, "deny"},
		{tok("alice"), ActCreateJob, []string{"/"}, "deny"},
		{tok("alice"), ActCreateJob, []string{""}, "deny"}, // the root pool
		{tok("alice"), ActCreateJob, []string{"/a/../b"}, "deny"},
		{tok("alice"), ActUpdateJob, []string{"/a/x", "/b"}, "deny"},
		{tok("alice"), ActUpdateJob, []string{"/a/x", "/a/y"}, "allow"},
		{tok("alice"), ActEditPool, []string{"/a"}, "deny"},
		{tok("alice"), ActEditPool, []string{"/a/x"}, "allow"},
		{tok("alice"), ActManageHost, nil, "deny"},
		{Identity{Name: "alice", Method: ByCertificate, ForwardedBy: "east"}, ActStopJob, []string{"/a/x"}, "allow"},
		{Identity{Name: "east", Method: ByRegion}, ActReplicate, nil, "allow"},
		{Identity{Name: "east", Method: ByRegion}, ActCreateJob, nil, "allow"},
		{Identity{Name: "east", Method: ByRegion}, ActEditPool, nil, "deny"},
		{Identity{Name: "east", Method: ByRegion}, ActManageRegion, nil, "deny"},
		// A region's name bound in a policy grants nothing to a user of
		// that name.
		{tok("east"), ActReplicate, nil, "deny"},
	}
	for _, c := range cases {
		d := Decide(p, c.id, c.action, c.pools)
		got := "deny"
		switch {
		case d.NeedPools:
			got = "need"
		case d.Allowed:
			got = "allow"
		}
		if got != c.want {
			t.Errorf("%s %s %v: %s (%s), want %s", c.id, c.action, c.pools, got, d.Reason, c.want)
		}
		if got == "deny" && (d.Reason == "" || strings.Contains(d.Reason, "\n")) {
			t.Errorf("%s %s %v: refusal without a one-line reason: %q", c.id, c.action, c.pools, d.Reason)
		}
	}
}

func TestParsePolicyNamesTheField(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"bindings: [{subjects: [a], role: god}]", "bindings[0].role"},
		{"bindings: [{subjects: [], role: admin}]", "bindings[0].subjects"},
		{"bindings: [{subjects: [a], role: pool-owner}]", "bindings[0].pools"},
		{"bindings: [{subjects: [a], role: pool-owner, pools: [a]}]", "bindings[0].pools[0]"},
		{"bindings: [{subjects: [a], role: admin, pools: [/a]}]", "bindings[0].pools"},
		{"bindings: [{subjects: [a], role: region}]", "bindings[0].role"},
		{"binding: []", "unknown field"},
	} {
		_, err := ParsePolicy([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.in, err, c.want)
		}
	}
	if p, err := ParsePolicy(nil); err != nil || len(p.Bindings) != 0 {
		t.Errorf("empty policy: %v %v", p, err)
	}
}

func TestEditablePolicyPrecedence(t *testing.T) {
	file, err := ParsePolicy([]byte("bindings: [{subjects: [root], role: admin}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	fixed := StaticPolicy(file)
	fixed.SetStored(&StoredPolicy{Policy: &Policy{}})
	if _, src := fixed.Source(now); src != "built in" || fixed.Editable() {
		t.Errorf("a file policy took a stored one: %s", src)
	}
	if _, src := EditablePolicy(nil).Source(now); src != "none" {
		t.Errorf("an empty editable policy: %s", src)
	}
	p := EditablePolicy(fixed)
	if got := p.At(now); got != file {
		t.Errorf("before a policy is stored, the file's is in force: %v", got)
	}
	raw, err := EncodeStoredPolicy(&StoredPolicy{YAML: "bindings: [{subjects: [eve], role: admin}]\n", SetBy: "root", SetAt: now})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := DecodeStoredPolicy(raw)
	if err != nil || sp.SetBy != "root" || !sp.SetAt.Equal(now) {
		t.Fatalf("round trip: %+v, %v", sp, err)
	}
	p.SetStored(sp)
	if got, src := p.Source(now); src != "store" || len(got.Bindings) != 1 || got.Bindings[0].Subjects[0] != "eve" {
		t.Errorf("the stored policy is in force: %s %+v", src, got)
	}
	if _, err := DecodeStoredPolicy([]byte(`{"yaml":"bindings: [{subjects: [x], role: king}]"}`)); err == nil {
		t.Error("a stored policy that does not parse was accepted")
	}
}

func TestCheckNewPolicy(t *testing.T) {
	root := Identity{Name: "root", Method: ByToken}
	for _, c := range []struct {
		policy string
		ok     bool
	}{
		{"bindings: [{subjects: [root], role: admin}]", true},
		{"bindings: [{subjects: [root, eve], role: admin}]", true},
		{"bindings: [{subjects: [eve], role: admin}, {subjects: [root], role: viewer}]", false},
		{"bindings: []", false},
		{"bindings: [{subjects: [root], role: nobody}]", false},
	} {
		_, err := CheckNewPolicy([]byte(c.policy), root)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.policy, err, c.ok)
		}
	}
	if _, err := CheckNewPolicy([]byte("bindings: [{subjects: [east], role: admin}]"), Identity{Name: "east", Method: ByRegion}); err == nil {
		t.Error("a region set a policy making itself admin")
	}
}
