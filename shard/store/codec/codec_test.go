package codec

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/storetest/fixture"
)

// randomString draws from a few shapes: empty, ASCII, multi-byte, long.
func randomString(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return ""
	case 1:
		return fmt.Sprint("s", rng.Uint64())
	case 2:
		return "ünï✓\x00\xff"
	}
	b := make([]byte, 200+rng.IntN(300))
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return string(b)
}

func randomTime(rng *rand.Rand) time.Time {
	switch rng.IntN(4) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9))
	case 2:
		return time.Date(1, 1, 1, 0, 0, 0, int(rng.Int64N(1e9)), time.UTC)
	}
	return time.Unix(1_700_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).In(time.FixedZone("z", rng.IntN(50_000)))
}

func randomTask(rng *rand.Rand) *model.TaskRuntime {
	return &model.TaskRuntime{
		ID:             model.TaskID{Job: "j", Instance: rng.Uint32()},
		Run:            rng.Uint32(),
		State:          model.TaskState(rng.UintN(256)),
		Goal:           model.TaskState(rng.UintN(256)),
		Host:           model.HostID(randomString(rng)),
		Cluster:        randomString(rng),
		Reason:         randomString(rng),
		Message:        randomString(rng),
		ExitCode:       int32(rng.Uint32()),
		Failures:       rng.Uint32(),
		StartTime:      randomTime(rng),
		CompletionTime: randomTime(rng),
		UpdateTime:     randomTime(rng),
		RetryAfter:     randomTime(rng),
		ConfigVersion:  rng.Uint64() >> rng.UintN(64),
		Revision:       rng.Uint64() >> rng.UintN(64),
	}
}

func randomStrings(rng *rand.Rand) []string {
	if rng.IntN(3) == 0 {
		return nil
	}
	out := make([]string, rng.IntN(5))
	for i := range out {
		out[i] = randomString(rng)
	}
	return out
}

func randomMap(rng *rand.Rand) map[string]string {
	if rng.IntN(3) == 0 {
		return nil
	}
	out := map[string]string{}
	for range rng.IntN(6) {
		out[randomString(rng)] = randomString(rng)
	}
	return out
}

func randomConstraints(rng *rand.Rand, depth int) []model.Constraint {
	if depth > 4 || rng.IntN(3) == 0 {
		return nil
	}
	out := make([]model.Constraint, rng.IntN(3))
	for i := range out {
		out[i] = model.Constraint{
			Key: randomString(rng), Op: model.ConstraintOp(rng.UintN(256)), Values: randomStrings(rng),
			AllOf: randomConstraints(rng, depth+1), AnyOf: randomConstraints(rng, depth+1),
		}
	}
	return out
}

func randomTaskSpec(rng *rand.Rand) model.TaskSpec {
	return model.TaskSpec{
		Command: randomString(rng), Args: randomStrings(rng), Env: randomMap(rng),
		Resources: model.Resources{
			MilliCPU: randomAmount(rng), MemMB: model.Unlimited, DiskMB: 0, GPU: int64(rng.Uint64()),
		},
		Constraints: randomConstraints(rng, 1),
		KillGrace:   time.Duration(rng.Int64()),
	}
}

func randomOverrides(rng *rand.Rand) []model.InstanceOverride {
	if rng.IntN(3) == 0 {
		return nil
	}
	out := make([]model.InstanceOverride, rng.IntN(4))
	for i := range out {
		if rng.IntN(4) > 0 {
			out[i].Instances = make([]model.InstanceRange, rng.IntN(3))
			for k := range out[i].Instances {
				out[i].Instances[k] = model.InstanceRange{From: rng.Uint32(), To: rng.Uint32()}
			}
		}
		out[i].Task = randomTaskSpec(rng)
	}
	return out
}

func randomSpec(rng *rand.Rand) model.JobSpec {
	return model.JobSpec{
		Name: randomString(rng), Type: model.JobType(rng.UintN(256)), Pool: randomString(rng),
		Region: randomString(rng), Priority: int32(rng.Uint32()), Preemptible: rng.IntN(2) == 0,
		Instances: rng.Uint32(), MaxRunning: rng.Uint32(), MaxAttempts: rng.Uint32(),
		Task:     randomTaskSpec(rng),
		Labels:   randomMap(rng),
		GangSize: rng.Uint32() >> rng.UintN(32), GangRestart: rng.IntN(2) == 0, Revocable: rng.IntN(2) == 0,
		Overrides: randomOverrides(rng),
		Schedule:  randomSchedule(rng),
	}
}

func randomStatus(rng *rand.Rand) model.JobStatus {
	st := model.JobStatus{
		State: model.JobState(rng.UintN(256)), Killed: rng.IntN(2) == 0, TasksCreated: rng.Uint32(),
		CreateTime: randomTime(rng), StartTime: randomTime(rng), CompletionTime: randomTime(rng),
		Region: randomString(rng), Message: randomString(rng), Update: model.UpdateID(randomString(rng)),
	}
	if rng.IntN(3) > 0 {
		st.TaskStates = map[model.TaskState]uint32{}
		for range rng.IntN(12) {
			st.TaskStates[model.TaskState(rng.UintN(256))] = rng.Uint32()
		}
	}
	return st
}

func randomJob(rng *rand.Rand) *model.Job {
	j := &model.Job{ID: "j", Revision: rng.Uint64(), ConfigVersion: rng.Uint64() >> rng.UintN(64),
		Spec: randomSpec(rng), Status: randomStatus(rng)}
	// A periodic job or a run is written as JobRecordV4, any other as V3.
	if rng.IntN(3) == 0 {
		j.Status.Periodic = &model.PeriodicStatus{Suspended: rng.IntN(2) == 0, LastTick: randomTime(rng),
			LastRun: model.JobID(randomString(rng)), Launched: rng.Uint64(), Skipped: rng.Uint64() >> rng.UintN(64), Missed: rng.Uint64()}
	}
	if rng.IntN(3) == 0 {
		j.Status.RunOf = &model.RunOf{Parent: model.JobID(randomString(rng)), Tick: randomTime(rng)}
	}
	return j
}

// randomSchedule is a periodic job's schedule, or nil (written as
// ConfigRecordV4).
func randomSchedule(rng *rand.Rand) *model.Schedule {
	if rng.IntN(2) == 0 {
		return nil
	}
	return &model.Schedule{Cron: randomString(rng), TimeZone: randomString(rng), Concurrency: model.Concurrency(rng.UintN(256)),
		StartingDeadline: time.Duration(rng.Int64()), KeepRuns: rng.Uint32()}
}

func randomUpdate(rng *rand.Rand) *model.Update {
	u := &model.Update{
		ID: "u", Job: model.JobID(randomString(rng)), FromVersion: rng.Uint64(), ToVersion: rng.Uint64() >> rng.UintN(64),
		BatchSize: rng.Uint32(), State: model.UpdateState(rng.UintN(256)), InstancesTotal: rng.Uint32(),
		InstancesDone: rng.Uint32(), CreateTime: randomTime(rng), CompletionTime: randomTime(rng),
		Message: randomString(rng), Revision: rng.Uint64() >> rng.UintN(64),
		InstancesFailed: rng.Uint32(), MaxFailures: rng.Uint32(), RollbackOnFailure: rng.IntN(2) == 0, Paused: rng.IntN(2) == 0,
		MinHealthy: time.Duration(rng.UintN(1<<40)) * time.Millisecond, InPlace: rng.IntN(2) == 0, InstancesInFlight: rng.Uint32(),
	}
	if rng.IntN(2) == 0 { // with a canary phase (V4), or without (written as V3)
		u.Canary, u.AutoPromoteAfter = rng.Uint32(), time.Duration(rng.UintN(1<<40))*time.Millisecond
		u.Promoted, u.PromotedBy = rng.IntN(2) == 0, randomString(rng)
		u.CanaryExtra = rng.IntN(2) == 0 // written as V5, else V4
	}
	return u
}

func randomHost(rng *rand.Rand) *model.HostRecord {
	return &model.HostRecord{
		Host: model.Host{
			ID: "c/h", Hostname: randomString(rng), Cluster: randomString(rng), Kind: randomString(rng),
			State: model.HostState(rng.UintN(256)), Capacity: model.Resources{MilliCPU: randomAmount(rng), MemMB: randomAmount(rng)},
			Labels: randomMap(rng),
		},
		Draining: rng.IntN(2) == 0, DrainReason: randomString(rng), DrainTime: randomTime(rng), LastSeen: randomTime(rng),
	}
}

func randomEvent(rng *rand.Rand) model.Event {
	ev := model.Event{Seq: rng.Uint64(), Time: randomTime(rng), Job: "j"}
	if rng.IntN(2) == 0 {
		st := randomStatus(rng)
		ev.JobStatus = &st
	} else {
		ev.Task = randomTask(rng)
	}
	return ev
}

// randomAmount draws ordinary amounts and the extremes a limit can hold.
func randomAmount(rng *rand.Rand) int64 {
	switch rng.IntN(6) {
	case 0:
		return model.Unlimited
	case 1:
		return 0
	case 2:
		return math.MinInt64
	case 3:
		return -1
	}
	return int64(rng.ExpFloat64() * 1000)
}

// randomShare draws ordinary weights and extremes.
func randomShare(rng *rand.Rand) float64 {
	switch rng.IntN(5) {
	case 0:
		return math.Inf(1)
	case 1:
		return math.MaxFloat64
	case 2:
		return math.SmallestNonzeroFloat64
	}
	return rng.ExpFloat64()
}

func randomPool(rng *rand.Rand) *model.Pool {
	resources := func() model.Resources {
		return model.Resources{MilliCPU: randomAmount(rng), MemMB: randomAmount(rng), DiskMB: randomAmount(rng), GPU: randomAmount(rng)}
	}
	share := model.Shares{CPU: randomShare(rng), Mem: randomShare(rng), Disk: randomShare(rng), GPU: randomShare(rng)}
	return &model.Pool{
		Path: "/p", Reservation: resources(), Limit: resources(), Share: share,
		CreateTime: randomTime(rng), Revision: rng.Uint64() >> rng.UintN(64),
	}
}

func TestPoolCodecRoundTripsRandomValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 13))
	for i := range 2000 {
		pool := randomPool(rng)
		got, err := DecodePool(pool.Path, EncodePool(pool, pool.Revision))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if want := fixture.Normal(pool); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: pool\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// Shares are stored as raw bits: +Inf, -Inf, -0 and NaN payloads all come
// back bit for bit.
func TestPoolCodecKeepsShareBits(t *testing.T) {
	shares := []float64{math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.NaN(),
		math.Float64frombits(0x7ff8_0000_dead_beef), math.SmallestNonzeroFloat64}
	for _, a := range shares {
		pool := &model.Pool{Path: "/", Share: model.EqualShares(a)}
		got, err := DecodePool("/", EncodePool(pool, 1))
		if err != nil {
			t.Fatal(err)
		}
		for i := range model.ResourceKinds {
			if math.Float64bits(got.Share.Get(i)) != math.Float64bits(a) {
				t.Fatalf("%v (bits %x) came back as bits %x", a, math.Float64bits(a), math.Float64bits(got.Share.Get(i)))
			}
		}
	}
}

// Records written before host pools read as records of hosts in the
// default host pool and of pools that may use any host pool.
func TestRecordsBeforeHostPoolsDecode(t *testing.T) {
	host := fixture.FullHost("c/v3")
	v3 := encodeHost(host, HostRecordV3)
	host.HostPool, host.HostPoolTarget = "", ""
	got, err := DecodeHost(host.Host.ID, v3)
	if err != nil || !reflect.DeepEqual(got, fixture.Normal(host)) {
		t.Fatalf("host record of version 3: %+v, %v", got, err)
	}
	if got.Pool() != model.DefaultHostPool {
		t.Fatalf("host of a version 3 record is in host pool %q, want %q", got.Pool(), model.DefaultHostPool)
	}
	pool := fixture.FullPool("/v2")
	v2 := encodePool(pool, 3, PoolRecordV2)
	pool.HostPools, pool.Clusters, pool.Revision = nil, nil, 3
	gotPool, err := DecodePool(pool.Path, v2)
	if err != nil || !reflect.DeepEqual(gotPool, fixture.Normal(pool)) {
		t.Fatalf("pool record of version 2: %+v, %v", gotPool, err)
	}
	// A host pool move is new in EventRecordV2: a record of version 1
	// claiming one is corrupt.
	ev := model.Event{Time: time.Unix(100, 0).UTC(), Job: model.HostPoolEvents,
		HostPoolMove: &model.HostPoolMove{Host: "c/h", From: "a", To: "b", Phase: model.HostPoolMoveDone, Reason: "r", Waited: time.Second}}
	b := AppendEvent(nil, &ev)
	gotEv, err := DecodeEvent(ev.Job, 7, b)
	ev.Seq = 7
	if err != nil || !reflect.DeepEqual(gotEv, ev) {
		t.Fatalf("host pool move event: %+v, %v", gotEv, err)
	}
	b[0] = EventRecordV1
	if _, err := DecodeEvent(ev.Job, 7, b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("host pool move in an event record of version 1: %v, want ErrCorrupt", err)
	}
}

// Records written before amounts were integer units hold doubles, cpu in
// cores and +Inf for no limit: they read back rounded to the nearest unit.
func TestDecimalResourceRecordsDecode(t *testing.T) {
	decimal := model.Resources{MilliCPU: 1500, MemMB: 2048, DiskMB: model.Unlimited, GPU: 1}
	pool := fixture.FullPool("/old")
	pool.Reservation, pool.Limit = decimal, decimal
	pool.HostPools = nil // added in PoolRecordV3
	got, err := DecodePool(pool.Path, encodePool(pool, 4, PoolRecordV1))
	pool.Revision = 4
	pool.Clusters = nil // added in PoolRecordV4
	if err != nil || !reflect.DeepEqual(got, fixture.Normal(pool)) {
		t.Fatalf("pool record of version 1: %+v, %v", got, err)
	}
	host := fixture.FullHost("c/old")
	host.DrainDeadline, host.Down = time.Time{}, false // added in HostRecordV3
	host.HostPool, host.HostPoolTarget = "", ""        // added in HostRecordV4
	gotHost, err := DecodeHost(host.Host.ID, encodeHost(host, HostRecordV2))
	if err != nil || !reflect.DeepEqual(gotHost, fixture.Normal(host)) {
		t.Fatalf("host record of version 2: %+v, %v", gotHost, err)
	}
	host.Host.Ports, host.Host.RunsImages = nil, false
	gotHost, err = DecodeHost(host.Host.ID, encodeHost(host, HostRecordV1))
	if err != nil || !reflect.DeepEqual(gotHost, fixture.Normal(host)) {
		t.Fatalf("host record of version 1: %+v, %v", gotHost, err)
	}
	spec := fixture.FullJob("old").Spec
	old, err := encodeConfig(&spec, ConfigRecordV2)
	if err != nil {
		t.Fatal(err)
	}
	spec.Clusters, spec.Schedule = nil, nil // added in ConfigRecordV4 and V5
	gotSpec, err := DecodeConfig(old)
	if err != nil || !reflect.DeepEqual(fixture.Normal(gotSpec), fixture.Normal(&spec)) {
		t.Fatalf("config record of version 2: %+v, %v", gotSpec, err)
	}

	// Fractions of a unit round to the nearest: what an older build stored
	// as 0.1 cores and 2048.25 MiB reads as 100 millicores and 2048 MiB.
	e := encoder{}
	for _, v := range []float64{0.1, 2048.25, math.Inf(1), 0.4} {
		e.float(v)
	}
	d := decoder{buf: e.buf}
	if r := d.decimalResources(); r != (model.Resources{MilliCPU: 100, MemMB: 2048, DiskMB: model.Unlimited, GPU: 0}) || d.done() != nil {
		t.Fatalf("decimal amounts read as %+v", r)
	}
}

// Encoding then decoding gives back exactly what went in, nil-ness of maps
// and slices included, times in UTC.
func TestCodecRoundTripsRandomValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 2000 {
		task := randomTask(rng)
		got, err := DecodeTask(task.ID, AppendTask(nil, task, task.Revision))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if want := fixture.Normal(task); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: task\n got %+v\nwant %+v", i, got, want)
		}

		job := randomJob(rng)
		gotJob, err := DecodeJobRecord(job.ID, EncodeJobRecord(job, job.Revision))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		record := *job
		record.Spec = model.JobSpec{}
		if !sameJob(gotJob, &record) {
			t.Fatalf("case %d: job record\n got %+v\nwant %+v", i, gotJob, &record)
		}
		config, err := EncodeConfig(&job.Spec)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		gotSpec, err := DecodeConfig(config)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(gotSpec, &job.Spec) {
			t.Fatalf("case %d: config\n got %+v\nwant %+v", i, gotSpec, &job.Spec)
		}
		if clone, err := CloneSpec(&job.Spec); err != nil || !reflect.DeepEqual(clone, &job.Spec) {
			t.Fatalf("case %d: clone of the spec differs: %v", i, err)
		}

		u := randomUpdate(rng)
		gotUpdate, err := DecodeUpdate(u.ID, EncodeUpdate(u, u.Revision))
		if err != nil || !reflect.DeepEqual(fixture.Normal(gotUpdate), fixture.Normal(u)) {
			t.Fatalf("case %d: update\n got %+v, %v\nwant %+v", i, gotUpdate, err, u)
		}
		h := randomHost(rng)
		gotHost, err := DecodeHost(h.Host.ID, EncodeHost(h))
		if err != nil || !reflect.DeepEqual(fixture.Normal(gotHost), fixture.Normal(h)) {
			t.Fatalf("case %d: host\n got %+v, %v\nwant %+v", i, gotHost, err, h)
		}
		ev := randomEvent(rng)
		if ev.Task != nil {
			ev.Task.ID.Job = ev.Job
		}
		gotEvent, err := DecodeEvent(ev.Job, ev.Seq, AppendEvent(nil, &ev))
		if err != nil || !reflect.DeepEqual(fixture.Normal(gotEvent), fixture.Normal(ev)) {
			t.Fatalf("case %d: event\n got %+v, %v\nwant %+v", i, gotEvent, err, ev)
		}
		if in, ok := EventInstance(AppendEvent(nil, &ev)); ok != (ev.Task != nil) || ok && in != ev.Task.ID.Instance {
			t.Fatalf("case %d: EventInstance = %d, %v", i, in, ok)
		}
	}
}

// sameJob is reflect.DeepEqual with times compared as instants in UTC; it
// keeps nil apart from empty, which the codec must preserve.
func sameJob(got, want *model.Job) bool {
	w := *want
	w.Status.CreateTime = normal(w.Status.CreateTime)
	w.Status.StartTime = normal(w.Status.StartTime)
	w.Status.CompletionTime = normal(w.Status.CompletionTime)
	if p := w.Status.Periodic; p != nil {
		pc := *p
		pc.LastTick = normal(pc.LastTick)
		w.Status.Periodic = &pc
	}
	if r := w.Status.RunOf; r != nil {
		w.Status.RunOf = &model.RunOf{Parent: r.Parent, Tick: normal(r.Tick)}
	}
	return reflect.DeepEqual(got, &w)
}

func normal(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// appendLegacyJob encodes a job as a build before JobRecordV3 did: the
// status then the compressed spec, in the layout of version.
func appendLegacyJob(t testing.TB, j *model.Job, rev uint64, version byte) []byte {
	t.Helper()
	spec := encoder{}
	layout := specV1
	if version == JobRecordV2 {
		layout = specV2
	}
	if err := spec.jobSpec(&j.Spec, layout); err != nil {
		t.Fatal(err)
	}
	e := encoder{}
	e.byte(version)
	e.uvarint(rev)
	e.jobStatus(&j.Status, version)
	out, err := deflate(e.buf, spec.buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Records of the versions older builds wrote decode, with the fields they
// lack zero: a job record with its spec inside is that job at config
// version 1.
func TestOlderRecordVersionsDecode(t *testing.T) {
	for _, version := range []byte{JobRecordV1, JobRecordV2} {
		job := fixture.FullJob("old")
		value := appendLegacyJob(t, job, 7, version)
		if !JobRecordHasSpec(value) {
			t.Fatalf("record of version %d does not hold its spec", version)
		}
		got, err := DecodeJobRecord("old", value)
		if err != nil {
			t.Fatalf("job record of version %d: %v", version, err)
		}
		want := fixture.Normal(job)
		want.Revision, want.ConfigVersion = 7, 1
		want.Status.Update, want.Status.Periodic, want.Status.RunOf = "", nil, nil
		want.Spec.Overrides = nil
		want.Spec.MaxPerHost, want.Spec.Spread, want.Spec.SLA, want.Spec.Clusters, want.Spec.Schedule = 0, nil, nil, nil, nil
		want.Spec.Task.Container, want.Spec.Task.Ports, want.Spec.Task.HealthCheck, want.Spec.Task.Readiness, want.Spec.Task.Volumes = nil, nil, nil, nil, nil
		if version == JobRecordV1 {
			want.Spec.GangSize, want.Spec.GangRestart, want.Spec.Revocable = 0, false, false
		}
		if got := fixture.Normal(got); !reflect.DeepEqual(got, want) {
			t.Fatalf("job record of version %d\n got %+v\nwant %+v", version, got, want)
		}
	}
	if JobRecordHasSpec(EncodeJobRecord(fixture.FullJob("new"), 1)) {
		t.Fatal("a record of the latest version claims to hold its spec")
	}

	// A task without workload fields ends in four zero bytes (health,
	// ready, a nil port list, an empty pinned host); V2 records end before
	// them, V1 records one byte earlier still (a zero config version).
	task := fixture.FullTask(model.TaskID{Job: "j", Instance: 4})
	task.Health, task.Ready, task.Extra = 0, 0, nil
	v2 := AppendTask(nil, task, 3)
	v2 = v2[: len(v2)-4 : len(v2)-4]
	v2[0] = TaskRecordV2
	got, err := DecodeTask(task.ID, v2)
	task.Revision = 3
	if err != nil || !reflect.DeepEqual(got, fixture.Normal(task)) {
		t.Fatalf("task record of version 2: %+v, %v", got, err)
	}
	task.ConfigVersion = 0
	v1 := AppendTask(nil, task, 3)
	v1 = v1[: len(v1)-5 : len(v1)-5]
	v1[0] = TaskRecordV1
	got, err = DecodeTask(task.ID, v1)
	if err != nil || !reflect.DeepEqual(got, fixture.Normal(task)) {
		t.Fatalf("task record of version 1: %+v, %v", got, err)
	}
}

// Configs and pools written before cluster policies decode without one.
func TestRecordsBeforeClusterPoliciesDecode(t *testing.T) {
	spec := fixture.FullJob("j").Spec
	b, err := encodeConfig(&spec, ConfigRecordV3)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	want := spec
	want.Clusters, want.Schedule = nil, nil
	if !reflect.DeepEqual(fixture.Normal(&model.Job{Spec: *got}).Spec, fixture.Normal(&model.Job{Spec: want}).Spec) {
		t.Fatalf("config record of version 3:\n got %+v\nwant %+v", *got, want)
	}
	pool := fixture.FullPool("/p")
	gotPool, err := DecodePool(pool.Path, encodePool(pool, 2, PoolRecordV3))
	if err != nil || gotPool.Clusters != nil || !reflect.DeepEqual(gotPool.HostPools, pool.HostPools) {
		t.Fatalf("pool record of version 3: %+v, %v", gotPool, err)
	}
	gotPool, err = DecodePool(pool.Path, EncodePool(pool, 2))
	if err != nil || !reflect.DeepEqual(gotPool.Clusters, pool.Clusters) {
		t.Fatalf("pool record of the latest version: %+v, %v", gotPool, err)
	}
}

func TestEncodeConfigRejectsCyclicConstraints(t *testing.T) {
	cyclic := make([]model.Constraint, 1)
	cyclic[0] = model.Constraint{AllOf: cyclic}
	spec := &model.JobSpec{}
	spec.Task.Constraints = cyclic
	if _, err := EncodeConfig(spec); !errors.Is(err, ErrConstraintDepth) {
		t.Fatalf("EncodeConfig of a cyclic constraint: %v", err)
	}
	spec.Task.Constraints = nil
	spec.Overrides = []model.InstanceOverride{{Task: model.TaskSpec{Constraints: cyclic}}}
	if _, err := EncodeConfig(spec); !errors.Is(err, ErrConstraintDepth) {
		t.Fatalf("EncodeConfig of a cyclic constraint in an override: %v", err)
	}
	if _, err := CloneSpec(spec); !errors.Is(err, ErrConstraintDepth) {
		t.Fatalf("CloneSpec of a cyclic constraint: %v", err)
	}
}

// fullValues are one value of every kind at its latest version, with a
// decoder of each.
func fullValues(t testing.TB) (map[string][]byte, map[string]func([]byte) error) {
	task := fixture.FullTask(model.TaskID{Job: "j"})
	config, err := EncodeConfig(&fixture.FullJob("j").Spec)
	if err != nil {
		t.Fatal(err)
	}
	ev := model.Event{Seq: 9, Time: time.Now(), Job: "j", Task: task}
	values := map[string][]byte{
		"task":      AppendTask(nil, task, 1),
		"job":       EncodeJobRecord(fixture.FullJob("j"), 1),
		"config":    config,
		"pool":      EncodePool(fixture.FullPool("/"), 1),
		"update":    EncodeUpdate(fixture.FullUpdate("u", "j"), 1),
		"host":      EncodeHost(fixture.FullHost("c/h")),
		"event":     AppendEvent(nil, &ev),
		"migration": EncodeMigration(fixture.FullMigration("m"), 1),
	}
	decoders := map[string]func([]byte) error{
		"task":      func(b []byte) error { _, err := DecodeTask(task.ID, b); return err },
		"job":       func(b []byte) error { _, err := DecodeJobRecord("j", b); return err },
		"config":    func(b []byte) error { _, err := DecodeConfig(b); return err },
		"pool":      func(b []byte) error { _, err := DecodePool("/", b); return err },
		"update":    func(b []byte) error { _, err := DecodeUpdate("u", b); return err },
		"host":      func(b []byte) error { _, err := DecodeHost("c/h", b); return err },
		"event":     func(b []byte) error { _, err := DecodeEvent("j", 9, b); return err },
		"migration": func(b []byte) error { _, err := DecodeMigration("m", b); return err },
	}
	return values, decoders
}

// Every strict prefix of a valid value, and every value with a flipped
// byte, decodes to an error or a value, never a panic; prefixes always
// fail, and so does a trailing byte.
func TestTruncatedValuesAreCorrupt(t *testing.T) {
	values, decoders := fullValues(t)
	for kind, value := range values {
		decode := decoders[kind]
		for n := range len(value) {
			if err := decode(value[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s prefix of %d bytes: %v", kind, n, err)
			}
		}
		for i := range value {
			flipped := append([]byte(nil), value...)
			flipped[i] ^= 0x5a
			_ = decode(flipped)
		}
		if err := decode(append(append([]byte(nil), value...), 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s with a trailing byte: %v", kind, err)
		}
	}
}

// Record versions: 0 and anything newer than this build's latest are
// rejected for every kind.
func TestUnknownRecordVersionsAreCorrupt(t *testing.T) {
	values, decoders := fullValues(t)
	latest := map[string]byte{"task": TaskRecordVersion, "job": JobRecordVersion, "config": ConfigRecordVersion,
		"pool": PoolRecordVersion, "update": UpdateRecordVersion, "host": HostRecordVersion, "event": EventRecordVersion,
		"migration": MigrationRecordVersion}
	for kind, value := range values {
		if err := decoders[kind](value); err != nil {
			t.Fatalf("%s at its latest version: %v", kind, err)
		}
		for _, v := range []byte{0, latest[kind] + 1, 255} {
			changed := append([]byte{v}, value[1:]...)
			if err := decoders[kind](changed); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s record of version %d: %v, want ErrCorrupt", kind, v, err)
			}
			if _, err := StoredRevision(changed, latest[kind]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("revision of a %s record of version %d: %v, want ErrCorrupt", kind, v, err)
			}
		}
	}
}

func FuzzDecodeTask(f *testing.F) {
	f.Add(AppendTask(nil, fixture.FullTask(model.TaskID{Job: "j"}), 3))
	f.Add([]byte{TaskRecordVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		task, err := DecodeTask(model.TaskID{Job: "j"}, b)
		if err != nil {
			return
		}
		// Whatever decodes must survive another round trip unchanged.
		back, err := DecodeTask(task.ID, AppendTask(nil, task, task.Revision))
		if err != nil || !reflect.DeepEqual(back, task) {
			t.Fatalf("decoded task does not round-trip: %v", err)
		}
	})
}

func FuzzDecodeJobRecord(f *testing.F) {
	f.Add(EncodeJobRecord(fixture.FullJob("j"), 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		job, err := DecodeJobRecord("j", b)
		if err != nil || JobRecordHasSpec(b) {
			return
		}
		// After one pass the encoding is canonical.
		again := EncodeJobRecord(job, job.Revision)
		back, err := DecodeJobRecord("j", again)
		if err != nil || string(EncodeJobRecord(back, back.Revision)) != string(again) {
			t.Fatalf("decoded job record does not round-trip: %v", err)
		}
	})
}

func FuzzDecodeConfig(f *testing.F) {
	value, err := EncodeConfig(&fixture.FullJob("j").Spec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(value)
	f.Fuzz(func(t *testing.T, b []byte) {
		spec, err := DecodeConfig(b)
		if err != nil {
			return
		}
		// After one pass the encoding is canonical: a second pass must
		// give the same bytes (compared as bytes, so NaN is no problem).
		again, err := EncodeConfig(spec)
		if err != nil {
			t.Fatalf("decoded config does not encode: %v", err)
		}
		back, err := DecodeConfig(again)
		if err != nil {
			t.Fatalf("re-encoded config does not decode: %v", err)
		}
		if third, err := EncodeConfig(back); err != nil || string(third) != string(again) {
			t.Fatalf("decoded config does not round-trip: %v", err)
		}
	})
}

func FuzzDecodePool(f *testing.F) {
	f.Add(EncodePool(fixture.FullPool("/p"), 3))
	f.Add([]byte{PoolRecordVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		pool, err := DecodePool("/p", b)
		if err != nil {
			return
		}
		// Varints may arrive overlong, so only after one pass is the
		// encoding canonical: a second pass must give the same bytes.
		again := EncodePool(pool, pool.Revision)
		back, err := DecodePool("/p", again)
		if err != nil {
			t.Fatalf("re-encoded pool does not decode: %v", err)
		}
		if third := EncodePool(back, back.Revision); string(third) != string(again) {
			t.Fatalf("decoded pool does not round-trip:\n in %x\nout %x", again, third)
		}
	})
}
