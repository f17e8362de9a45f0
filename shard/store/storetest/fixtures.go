package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// A fixed non-UTC zone, so a backend that drops or mangles the location
// is caught.
var fixtureZone = time.FixedZone("UTC+05:30", 5*3600+30*60)

func fixtureTime(sec int64, nsec int64) time.Time {
	return time.Unix(1_700_000_000+sec, nsec).In(fixtureZone)
}

// FullJob returns a job whose every field, at every nesting level, holds a
// non-zero value.
func FullJob(id model.JobID) *model.Job {
	leaf := func(key string) model.Constraint {
		return model.Constraint{Key: key, Op: model.OpIn, Values: []string{key + "-a", key + "-b"}}
	}
	return &model.Job{
		ID: id,
		Spec: model.JobSpec{
			Name:        "name of " + string(id),
			Type:        model.JobStateful,
			Pool:        "/org/team",
			Region:      "eu-west",
			Priority:    -7,
			Preemptible: true,
			Instances:   100_000,
			MaxRunning:  250,
			MaxAttempts: 3,
			Task: model.TaskSpec{
				Command: "/bin/worker",
				Args:    []string{"--shard", "7", "", "ünïcode ✓"},
				Env:     map[string]string{"HOME": "/tmp", "EMPTY": "", "K=V": "x=y"},
				Resources: model.Resources{
					MilliCPU: 1500, MemMB: 2048, DiskMB: 10240, GPU: 1,
				},
				Constraints: []model.Constraint{
					{
						Key:    "zone",
						Op:     model.OpNotEquals,
						Values: []string{"z1"},
						AllOf:  []model.Constraint{leaf("rack"), {AnyOf: []model.Constraint{leaf("a"), leaf("b")}}},
						AnyOf:  []model.Constraint{leaf("gpu"), {Key: "ssd", Op: model.OpExists}},
					},
					{Key: "os", Op: model.OpEquals, Values: []string{"linux"}},
				},
				KillGrace: 30*time.Second + 7*time.Nanosecond,
				Container: &model.Container{Image: "registry.example:5000/maps/worker:1.2", PullPolicy: model.PullAlways},
				Ports:     []model.PortSpec{{Name: "http"}, {Name: "admin", Port: 9090}},
				HealthCheck: &model.HealthCheck{
					Kind: model.ProbeHTTP, Port: "http", Path: "/healthz", InitialDelay: time.Second,
					Interval: 2 * time.Second, Timeout: 500 * time.Millisecond, FailureThreshold: 4,
					Command: "unused", Args: []string{"kept", "anyway"},
				},
				Readiness: &model.HealthCheck{Kind: model.ProbeCommand, Command: "/bin/ready", Args: []string{"-q"}, Port: "9090", Path: "/", InitialDelay: 1, Interval: 2, Timeout: 3, FailureThreshold: 1},
				Volumes:   []model.Volume{{Name: "data", SizeMB: 1 << 20, Path: "/data"}},
			},
			MaxPerHost: 2,
			Spread:     []model.SpreadSpec{{Label: "zone", Max: 3}},
			SLA:        &model.SLA{MaxUnavailable: 25, Percent: true},
			Clusters:   &model.ClusterPolicy{Prefer: []string{"kubernetes:k8s-east"}, Avoid: []string{"dc1"}},
			Schedule: &model.Schedule{Cron: "*/5 * * * *", TimeZone: "Europe/Berlin", Concurrency: model.ConcurrencyForbid,
				StartingDeadline: 90 * time.Second, KeepRuns: 7},
			Labels:      map[string]string{"team": "maps", "tier": "batch"},
			GangSize:    4,
			GangRestart: true,
			Revocable:   true,
			Overrides: []model.InstanceOverride{
				{
					Instances: []model.InstanceRange{{From: 3, To: 9}, {From: 70_000, To: 70_001}},
					Task: model.TaskSpec{
						Command:   "/bin/worker-canary",
						Args:      []string{"--canary"},
						Env:       map[string]string{"CANARY": "1"},
						Resources: model.Resources{MilliCPU: 2000, MemMB: 4096, DiskMB: 1, GPU: 1},
						Constraints: []model.Constraint{{
							Key: "canary", Op: model.OpIn, Values: []string{"yes"},
							AllOf: []model.Constraint{leaf("c1")}, AnyOf: []model.Constraint{leaf("c2")},
						}},
						KillGrace:   time.Minute,
						Container:   &model.Container{Image: "busybox:stable", PullPolicy: model.PullNever},
						Ports:       []model.PortSpec{},
						HealthCheck: &model.HealthCheck{Kind: model.ProbeTCP, Command: "c", Args: []string{"a"}, Port: "8080", Path: "/p", InitialDelay: 1, Interval: 2, Timeout: 3, FailureThreshold: 4},
						Readiness:   &model.HealthCheck{Kind: model.ProbeCommand, Command: "true", Args: []string{"a"}, Port: "p", Path: "/p", InitialDelay: 1, Interval: 2, Timeout: 3, FailureThreshold: 4},
						Volumes:     []model.Volume{},
					},
				},
				{Instances: []model.InstanceRange{{From: 10, To: 10}}, Task: model.TaskSpec{Args: []string{}}},
			},
		},
		Status: model.JobStatus{
			State:        model.JobRunning,
			Killed:       true,
			TasksCreated: 99_999,
			TaskStates: map[model.TaskState]uint32{
				model.TaskRunning: 90_000, model.TaskPending: 9_999, model.TaskFailed: 1,
			},
			CreateTime:     fixtureTime(0, 1),
			StartTime:      fixtureTime(60, 999_999_999),
			CompletionTime: fixtureTime(3600, 123_456_789),
			Region:         "eu-west",
			Message:        "running, 1 failed",
			Update:         model.UpdateID("update-of-" + string(id)),
			Periodic: &model.PeriodicStatus{Suspended: true, LastTick: fixtureTime(7200, 0), LastRun: "run-of-" + id,
				Launched: 12, Skipped: 3, Missed: 1},
			RunOf: &model.RunOf{Parent: "parent-of-" + id, Tick: fixtureTime(300, 0)},
		},
		ConfigVersion: 2,
		Revision:      41,
	}
}

// FullTask returns a task runtime whose every field holds a non-zero value.
func FullTask(id model.TaskID) *model.TaskRuntime {
	return &model.TaskRuntime{
		ID:             id,
		Run:            3 + id.Instance,
		State:          model.TaskRunning,
		Goal:           model.TaskSucceeded,
		Host:           model.HostID(fmt.Sprintf("host-%d", id.Instance%97)),
		Cluster:        "k8s-east",
		Reason:         model.ReasonRetrying,
		Message:        "started on attempt 3",
		ExitCode:       -9,
		Failures:       2,
		StartTime:      fixtureTime(int64(id.Instance), 5),
		CompletionTime: fixtureTime(int64(id.Instance)+10, 999_999_999),
		UpdateTime:     fixtureTime(int64(id.Instance)+20, 1),
		RetryAfter:     fixtureTime(int64(id.Instance)+30, 500),
		ConfigVersion:  1 + uint64(id.Instance%3),
		Health:         model.HealthUnhealthy,
		Ready:          model.HealthHealthy,
		Extra: &model.TaskExtra{
			Ports:      []model.NamedPort{{Name: "admin", Port: 9090}, {Name: "http", Port: 31000 + id.Instance%1000}},
			PinnedHost: model.HostID(fmt.Sprintf("k8s-east/host-%d", id.Instance%97)),
		},
		Revision: 0,
	}
}

// FullUpdate returns an update of job whose every field but Revision holds
// a non-zero value.
func FullUpdate(id model.UpdateID, job model.JobID) *model.Update {
	return &model.Update{
		ID:                id,
		Job:               job,
		FromVersion:       2,
		ToVersion:         3,
		BatchSize:         50,
		State:             model.UpdateRollingForward,
		InstancesTotal:    100_000,
		InstancesDone:     1_250,
		InstancesFailed:   3,
		MaxFailures:       5,
		RollbackOnFailure: true,
		Paused:            true,
		MinHealthy:        90 * time.Second,
		InPlace:           true,
		InstancesInFlight: 7,
		Canary:            2,
		AutoPromoteAfter:  5 * time.Minute,
		Promoted:          true,
		PromotedBy:        "alice",
		CanaryExtra:       true,
		CreateTime:        fixtureTime(120, 7),
		CompletionTime:    fixtureTime(7200, 999_999_999),
		Message:           "rolling: " + string(id),
	}
}

// FullHost returns a host record whose every field holds a non-zero value.
func FullHost(id model.HostID) *model.HostRecord {
	return &model.HostRecord{
		Host: model.Host{
			ID:         id,
			Hostname:   "name-of-" + string(id),
			Cluster:    "k8s-east",
			Kind:       "kubernetes",
			State:      model.HostDraining,
			Capacity:   model.Resources{MilliCPU: 64_000, MemMB: 262_144, DiskMB: model.Unlimited, GPU: 8},
			Labels:     map[string]string{"rack": "r7", "zone": "z1"},
			Ports:      []model.PortRange{{From: 31000, To: 32000}, {From: 8080, To: 8080}},
			RunsImages: true,
		},
		Draining:       true,
		DrainReason:    "kernel upgrade",
		DrainTime:      fixtureTime(-60, 3),
		DrainDeadline:  fixtureTime(600, 9),
		Down:           true,
		LastSeen:       fixtureTime(5, 123),
		HostPool:       "services",
		HostPoolTarget: "batch",
	}
}

// FullPool returns a pool whose every field but Revision holds a non-zero
// value; some of its limits are unlimited (model.Unlimited).
func FullPool(path string) *model.Pool {
	return &model.Pool{
		Path:        path,
		Reservation: model.Resources{MilliCPU: 8_500, MemMB: 16_384, DiskMB: 100_000, GPU: 1},
		Limit:       model.Resources{MilliCPU: model.Unlimited, MemMB: 65_536, DiskMB: model.Unlimited, GPU: 4},
		Share:       model.Shares{CPU: 1.25, Mem: 2, Disk: 0.5, GPU: 3},
		CreateTime:  fixtureTime(-86_400, 42),
		HostPools:   []string{"batch", "shared"},
		Clusters:    &model.ClusterPolicy{Prefer: []string{"k8s-east"}, Avoid: []string{"mesos:dc1", "dc2"}},
		Revision:    0,
	}
}

var timeType = reflect.TypeFor[time.Time]()

// zeroFieldPaths lists the field paths of v that are zero everywhere they
// occur. Slice elements share a path; a struct type already being walked is
// not descended into again (only its own non-zero-ness counts), so
// recursive types such as Constraint are finite.
func zeroFieldPaths(v any) []string {
	seen := map[string]bool{}
	var walk func(v reflect.Value, path string, stack map[reflect.Type]bool)
	walk = func(v reflect.Value, path string, stack map[reflect.Type]bool) {
		if path != "" {
			seen[path] = seen[path] || !v.IsZero()
		}
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path, stack)
			}
		case reflect.Struct:
			if v.Type() == timeType || (stack[v.Type()] && path != "") {
				return
			}
			stack[v.Type()] = true
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name, stack)
			}
			delete(stack, v.Type())
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), path+"[]", stack)
			}
		}
	}
	walk(reflect.ValueOf(v), "", map[reflect.Type]bool{})
	var zero []string
	for p, nonZero := range seen {
		if !nonZero {
			zero = append(zero, p)
		}
	}
	sort.Strings(zero)
	return zero
}

// Normal returns a deep copy of v (a model value, a pointer to one or a
// slice of them) in the form every backend returns: times in UTC without a
// monotonic reading, and empty maps and slices as nil.
func Normal[T any](v T) T {
	out := reflect.New(reflect.TypeOf(v)).Elem()
	normalInto(out, reflect.ValueOf(v))
	return out.Interface().(T)
}

func normalInto(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.New(src.Type().Elem()))
		normalInto(dst.Elem(), src.Elem())
	case reflect.Struct:
		if src.Type() == timeType {
			t := src.Interface().(time.Time)
			if !t.IsZero() {
				dst.Set(reflect.ValueOf(t.Round(0).UTC()))
			}
			return
		}
		for i := range src.NumField() {
			normalInto(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		if src.Len() == 0 {
			return
		}
		dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			normalInto(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.Len() == 0 {
			return
		}
		dst.Set(reflect.MakeMapWithSize(src.Type(), src.Len()))
		it := src.MapRange()
		for it.Next() {
			val := reflect.New(src.Type().Elem()).Elem()
			normalInto(val, it.Value())
			dst.SetMapIndex(it.Key(), val)
		}
	default:
		dst.Set(src)
	}
}

// requireEqual fails unless got equals want once both are normalised.
func requireEqual[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	g, w := Normal(got), Normal(want)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s differs:\n got: %+v\nwant: %+v", what, g, w)
	}
}

// requireUTC fails unless every time in v is zero or in UTC.
func requireUTC(t testing.TB, what string, v any) {
	t.Helper()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			if v.Type() == timeType {
				tm := v.Interface().(time.Time)
				if !tm.IsZero() && tm.Location() != time.UTC {
					t.Fatalf("%s: time %v is in %v, want UTC", what, tm, tm.Location())
				}
				return
			}
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(v))
}

// UnmarshalDecimalJSON decodes JSON written when resource amounts were
// decimal ({"CPU": cores, "MemMB": ...}) into today's types, converting
// every resources object to integer units as a reader of old records does.
func UnmarshalDecimalJSON(raw []byte, out any) error {
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return err
	}
	raw, err := json.Marshal(decimalAmounts(generic))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func decimalAmounts(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if cpu, ok := v["CPU"].(float64); ok {
			num := func(k string) float64 { f, _ := v[k].(float64); return f }
			return model.ResourcesFromDecimal(cpu, num("MemMB"), num("DiskMB"), num("GPU"))
		}
		for k, x := range v {
			v[k] = decimalAmounts(x)
		}
	case []any:
		for i, x := range v {
			v[i] = decimalAmounts(x)
		}
	}
	return v
}
