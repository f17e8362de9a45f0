package placement

import (
	"errors"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestExplanationString(t *testing.T) {
	for _, tc := range []struct {
		e    Explanation
		want string
	}{
		{Explanation{Code: Unschedulable, Hosts: 50000, Filtered: []FilterCount{{ReasonInsufficientCPU, 31200}, {"zone==a", 18800}}},
			"0/50000 hosts: 31200 insufficient cpu, 18800 zone==a"},
		{Explanation{Code: Unschedulable}, "0/0 hosts"},
		{Explanation{Code: GangIncomplete, Hosts: 3, Feasible: 3, Detail: "gang 1: 1 of 4 tasks found no host"},
			"gang 1: 1 of 4 tasks found no host; 3/3 hosts"},
		{Explanation{Code: Conflict, Detail: "host h2: insufficient cpu"}, "conflict: host h2: insufficient cpu"},
		{Explanation{Code: InvalidTask, Detail: "ports is negative"}, "invalid task: ports is negative"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestNewHostIndexRejectsBadHosts(t *testing.T) {
	for name, h := range map[string]Host{
		"empty id":        {Free: model.Resources{MilliCPU: 1000}},
		"negative cpu":    {ID: "h", Free: model.Resources{MilliCPU: -1000}},
		"negative memory": {ID: "h", Free: model.Resources{MemMB: -1}},
		"unlimited disk":  {ID: "h", Free: model.Resources{DiskMB: model.Unlimited}},
		"negative ports":  {ID: "h", Ports: -1},
		"negative count":  {ID: "h", Instances: map[string]int{"j": -1}},
	} {
		if _, err := NewHostIndex([]Host{h}); !errors.Is(err, ErrInvalidHost) {
			t.Errorf("%s: got %v, want ErrInvalidHost", name, err)
		}
	}
}

func TestStrategyForJobType(t *testing.T) {
	for jt, want := range map[model.JobType]Strategy{
		model.JobBatch: StrategyPack, model.JobService: StrategySpread,
		model.JobStateful: StrategySpread, model.JobDaemon: StrategySpread,
	} {
		if got := StrategyFor(jt); got != want {
			t.Errorf("%v: got %v, want %v", jt, got, want)
		}
		if s, ok := ParseStrategy(want.String()); !ok || s != want {
			t.Errorf("ParseStrategy(%q) = %v, %v", want.String(), s, ok)
		}
	}
}

func TestPlaceOnNilIndexExplainsInsteadOfPanicking(t *testing.T) {
	res := Place(nil, []Task{{Ref: 4, Job: "j", Resources: model.Resources{MilliCPU: 1000}}}, Options{})
	if len(res.Unplaced) != 1 || res.Unplaced[0].Reason.String() != "0/0 hosts" {
		t.Fatalf("%+v", res)
	}
}
