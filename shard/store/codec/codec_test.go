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
	"github.com/peloton-federated/peloton/shard/store/storetest"
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

func randomJob(rng *rand.Rand) *model.Job {
	j := &model.Job{ID: "j", Revision: rng.Uint64()}
	j.Spec = model.JobSpec{
		Name: randomString(rng), Type: model.JobType(rng.UintN(256)), Pool: randomString(rng),
		Region: randomString(rng), Priority: int32(rng.Uint32()), Preemptible: rng.IntN(2) == 0,
		Instances: rng.Uint32(), MaxRunning: rng.Uint32(), MaxAttempts: rng.Uint32(),
		Task: model.TaskSpec{
			Command: randomString(rng), Args: randomStrings(rng), Env: randomMap(rng),
			Resources: model.Resources{
				CPU: rng.NormFloat64(), MemMB: math.Inf(1), DiskMB: -0.0, GPU: float64(rng.Uint64()),
			},
			Constraints: randomConstraints(rng, 1),
			KillGrace:   time.Duration(rng.Int64()),
		},
		Labels:   randomMap(rng),
		GangSize: rng.Uint32() >> rng.UintN(32), GangRestart: rng.IntN(2) == 0, Revocable: rng.IntN(2) == 0,
	}
	j.Status = model.JobStatus{
		State: model.JobState(rng.UintN(256)), Killed: rng.IntN(2) == 0, TasksCreated: rng.Uint32(),
		CreateTime: randomTime(rng), StartTime: randomTime(rng), CompletionTime: randomTime(rng),
		Region: randomString(rng), Message: randomString(rng),
	}
	if rng.IntN(3) > 0 {
		j.Status.TaskStates = map[model.TaskState]uint32{}
		for range rng.IntN(12) {
			j.Status.TaskStates[model.TaskState(rng.UintN(256))] = rng.Uint32()
		}
	}
	return j
}

// randomAmount draws ordinary amounts and the extremes a limit can hold.
func randomAmount(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return math.Inf(1)
	case 1:
		return 0
	case 2:
		return math.MaxFloat64
	case 3:
		return math.SmallestNonzeroFloat64
	}
	return rng.ExpFloat64() * 1000
}

func randomPool(rng *rand.Rand) *model.Pool {
	resources := func() model.Resources {
		return model.Resources{CPU: randomAmount(rng), MemMB: randomAmount(rng), DiskMB: randomAmount(rng), GPU: randomAmount(rng)}
	}
	return &model.Pool{
		Path: "/p", Reservation: resources(), Limit: resources(), Share: resources(),
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
		if want := storetest.Normal(pool); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: pool\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// Amounts are stored as raw bits: +Inf, -Inf, -0 and NaN payloads all come
// back bit for bit.
func TestPoolCodecKeepsFloatBits(t *testing.T) {
	amounts := []float64{math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.NaN(),
		math.Float64frombits(0x7ff8_0000_dead_beef), math.SmallestNonzeroFloat64}
	for _, a := range amounts {
		pool := &model.Pool{Path: "/", Limit: model.Resources{CPU: a, MemMB: a, DiskMB: a, GPU: a}}
		got, err := DecodePool("/", EncodePool(pool, 1))
		if err != nil {
			t.Fatal(err)
		}
		for i := range model.ResourceKinds {
			if math.Float64bits(got.Limit.Get(i)) != math.Float64bits(a) {
				t.Fatalf("%v (bits %x) came back as bits %x", a, math.Float64bits(a), math.Float64bits(got.Limit.Get(i)))
			}
		}
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
		if want := storetest.Normal(task); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: task\n got %+v\nwant %+v", i, got, want)
		}

		job := randomJob(rng)
		value, err := EncodeJob(job, job.Revision)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		gotJob, err := DecodeJob(job.ID, value)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !sameJob(gotJob, job) {
			t.Fatalf("case %d: job\n got %+v\nwant %+v", i, gotJob, job)
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
	return reflect.DeepEqual(got, &w)
}

func normal(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func TestEncodeJobRejectsCyclicConstraints(t *testing.T) {
	cyclic := make([]model.Constraint, 1)
	cyclic[0] = model.Constraint{AllOf: cyclic}
	job := &model.Job{ID: "j"}
	job.Spec.Task.Constraints = cyclic
	if _, err := EncodeJob(job, 1); !errors.Is(err, ErrConstraintDepth) {
		t.Fatalf("encodeJob of a cyclic constraint: %v", err)
	}
}

// Every strict prefix of a valid value, and every value with a flipped
// byte, decodes to an error or a value, never a panic; prefixes always
// fail.
func TestTruncatedValuesAreCorrupt(t *testing.T) {
	task := storetest.FullTask(model.TaskID{Job: "j", Instance: 9})
	value := AppendTask(nil, task, 4)
	for n := range len(value) {
		if _, err := DecodeTask(task.ID, value[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}
	jobValue, err := EncodeJob(storetest.FullJob("j"), 4)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(jobValue) {
		if _, err := DecodeJob("j", jobValue[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("job prefix of %d bytes: %v", n, err)
		}
	}
	for i := range jobValue {
		flipped := append([]byte(nil), jobValue...)
		flipped[i] ^= 0x5a
		_, _ = DecodeJob("j", flipped)
	}
	pool := storetest.FullPool("/p")
	poolValue := EncodePool(pool, 4)
	for n := range len(poolValue) {
		if _, err := DecodePool(pool.Path, poolValue[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("pool prefix of %d bytes: %v", n, err)
		}
	}
	if _, err := DecodePool(pool.Path, append(poolValue, 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("pool with a trailing byte: %v", err)
	}
}

// Record versions: 0 and anything newer than this build's latest are
// rejected for every kind.
func TestUnknownRecordVersionsAreCorrupt(t *testing.T) {
	task := storetest.FullTask(model.TaskID{Job: "j"})
	job, err := EncodeJob(storetest.FullJob("j"), 1)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]byte{
		"task": AppendTask(nil, task, 1),
		"job":  job,
		"pool": EncodePool(storetest.FullPool("/"), 1),
	}
	decoders := map[string]func([]byte) error{
		"task": func(b []byte) error { _, err := DecodeTask(task.ID, b); return err },
		"job":  func(b []byte) error { _, err := DecodeJob("j", b); return err },
		"pool": func(b []byte) error { _, err := DecodePool("/", b); return err },
	}
	latest := map[string]byte{"task": TaskRecordVersion, "job": JobRecordVersion, "pool": PoolRecordVersion}
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
	f.Add(AppendTask(nil, storetest.FullTask(model.TaskID{Job: "j"}), 3))
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

func FuzzDecodeJob(f *testing.F) {
	value, err := EncodeJob(storetest.FullJob("j"), 3)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(value)
	f.Fuzz(func(t *testing.T, b []byte) {
		job, err := DecodeJob("j", b)
		if err != nil {
			return
		}
		// After one pass the encoding is canonical: a second pass must
		// give the same bytes (compared as bytes, so NaN is no problem).
		again, err := EncodeJob(job, job.Revision)
		if err != nil {
			t.Fatalf("decoded job does not encode: %v", err)
		}
		back, err := DecodeJob("j", again)
		if err != nil {
			t.Fatalf("re-encoded job does not decode: %v", err)
		}
		if third, err := EncodeJob(back, back.Revision); err != nil || string(third) != string(again) {
			t.Fatalf("decoded job does not round-trip: %v", err)
		}
	})
}

func FuzzDecodePool(f *testing.F) {
	f.Add(EncodePool(storetest.FullPool("/p"), 3))
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
