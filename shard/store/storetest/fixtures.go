package storetest

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/storetest/fixture"
)

// The fixtures of package fixture, under the names the tests of the
// backends use.
var (
	fixtureZone = fixture.Zone
	fixtureTime = fixture.Time
)

// FullJob is fixture.FullJob.
func FullJob(id model.JobID) *model.Job { return fixture.FullJob(id) }

// FullTask is fixture.FullTask.
func FullTask(id model.TaskID) *model.TaskRuntime { return fixture.FullTask(id) }

// FullUpdate is fixture.FullUpdate.
func FullUpdate(id model.UpdateID, job model.JobID) *model.Update { return fixture.FullUpdate(id, job) }

// FullHost is fixture.FullHost.
func FullHost(id model.HostID) *model.HostRecord { return fixture.FullHost(id) }

// FullPool is fixture.FullPool.
func FullPool(path string) *model.Pool { return fixture.FullPool(path) }

// FullMigration is fixture.FullMigration.
func FullMigration(id model.MigrationID) *model.Migration { return fixture.FullMigration(id) }

// Normal is fixture.Normal.
func Normal[T any](v T) T { return fixture.Normal(v) }

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
