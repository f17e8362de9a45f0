package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type memPolicyStore struct {
	mu    sync.Mutex
	saved []*auth.StoredPolicy
}

func (m *memPolicyStore) SavePolicy(_ context.Context, sp *auth.StoredPolicy) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saved = append(m.saved, sp)
	return nil
}

// With the policy in the store, an admin replaces it through the API: the
// new bindings are in force at once, kept in the store, and the change is
// audited; a viewer may not, a policy without an admin or taking the
// admin role from its setter is refused, and bad YAML names the field.
func TestSetPolicyThroughTheAPI(t *testing.T) {
	ps := &memPolicyStore{}
	f := startSecuredWith(t, func(a *Auth) {
		a.Policy = auth.EditablePolicy(a.Policy)
		a.PolicyStore = ps
	})
	ctx := context.Background()
	root, eve := pb.NewAuthServiceClient(f.dial(t, "tok-root", "")), pb.NewAuthServiceClient(f.dial(t, "tok-eve", ""))

	got, err := root.GetPolicy(ctx, &pb.GetPolicyRequest{})
	if err != nil || got.GetPolicy().GetSource() != "built in" || !got.GetPolicy().GetEditable() || !strings.Contains(got.GetPolicy().GetYaml(), "pool-owner") {
		t.Fatalf("initial policy: %v, %v", got, err)
	}
	if _, err := eve.GetPolicy(ctx, &pb.GetPolicyRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a viewer reading the policy: %v, want PermissionDenied", err)
	}
	promote := "# eve runs /b now\nbindings:\n  - {subjects: [root], role: admin}\n  - {subjects: [eve], role: pool-owner, pools: [/b]}\n"
	if _, err := eve.SetPolicy(ctx, &pb.SetPolicyRequest{Policy: promote}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a viewer setting the policy: %v, want PermissionDenied", err)
	}
	for _, c := range []struct {
		policy, want string
		code         codes.Code
	}{
		{"", "policy: empty", codes.InvalidArgument},
		{"bindings:\n  - {subjects: [root], role: king}\n", "bindings[0].role", codes.InvalidArgument},
		{"bindings:\n  - {subjects: [eve], role: viewer}\n", "no admin binding", codes.FailedPrecondition},
		{"bindings:\n  - {subjects: [eve], role: admin}\n  - {subjects: [root], role: operator}\n", "takes the admin role from root", codes.FailedPrecondition},
	} {
		_, err := root.SetPolicy(ctx, &pb.SetPolicyRequest{Policy: c.policy})
		if status.Code(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("setting %q: %v, want %v naming %q", c.policy, err, c.code, c.want)
		}
	}
	if len(ps.saved) != 0 {
		t.Fatalf("refused policies were stored: %d", len(ps.saved))
	}
	can, _ := eve.CanI(ctx, &pb.CanIRequest{Action: "create-job", Pool: "/b/x"})
	if can.GetAllowed() {
		t.Fatal("eve may create jobs in /b before the change")
	}
	set, err := root.SetPolicy(ctx, &pb.SetPolicyRequest{Policy: promote})
	if err != nil {
		t.Fatal(err)
	}
	if doc := set.GetPolicy(); doc.GetSource() != "store" || doc.GetSetBy() != "root" || doc.GetYaml() != promote {
		t.Errorf("after set: %v", doc)
	}
	if len(ps.saved) != 1 || ps.saved[0].YAML != promote {
		t.Errorf("stored: %v", ps.saved)
	}
	can, err = eve.CanI(ctx, &pb.CanIRequest{Action: "create-job", Pool: "/b/x"})
	if err != nil || !can.GetAllowed() {
		t.Errorf("eve after the change: %v, %v; want allowed", can, err)
	}
	recs, _ := f.audit.List(ctx, nil)
	var lines []string
	for _, r := range recs {
		lines = append(lines, r.GetName()+" "+r.GetAction()+" "+r.GetResource()+" "+r.GetCode())
	}
	for _, want := range []string{"root set-policy policy OK", "eve set-policy policy PermissionDenied", "root set-policy policy FailedPrecondition"} {
		if !strings.Contains(strings.Join(lines, "\n"), want) {
			t.Errorf("audit log lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

// With the policy from a file, SetPolicy says where to edit it.
func TestSetPolicyRefusedWhenTheFileIsTheSource(t *testing.T) {
	f := startSecured(t)
	_, err := pb.NewAuthServiceClient(f.dial(t, "tok-root", "")).SetPolicy(context.Background(), &pb.SetPolicyRequest{Policy: "bindings: []"})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "policySource") {
		t.Fatalf("SetPolicy with a file policy: %v, want FailedPrecondition naming auth.policySource", err)
	}
}
