package auth

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"
)

// Every RPC of the API has a rule, its action reads exactly when the
// descriptor says the RPC has no side effects, and its target reads a
// request of the RPC's type (an empty one included) without panicking.
func TestEveryRPCHasARule(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Methods() {
		name := FullMethodName(m)
		seen[name] = true
		rule, ok := Rules[name]
		if !ok {
			t.Errorf("%s has no rule in auth.Rules: add one (with the action it takes)", name)
			continue
		}
		if rule.Action.Reads() == Mutating(name) {
			t.Errorf("%s: action %s, but the descriptor says mutating=%v: mark reads with idempotency_level = NO_SIDE_EFFECTS", name, rule.Action, Mutating(name))
		}
		if rule.Target == nil {
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: target of an empty request panics: %v", name, r)
				}
			}()
			tg := rule.Target(mt.New().Interface())
			if tg.Resource == "" {
				t.Errorf("%s: target names no resource", name)
			}
		}()
	}
	for name := range Rules {
		if !seen[name] {
			t.Errorf("rule for %s, which the API does not have", name)
		}
	}
	if !Mutating("/peloton.v1.JobService/NotYetWritten") {
		t.Error("an RPC the descriptors do not know must count as mutating")
	}
	fmt.Printf("%d RPCs classified\n", len(seen))
}
