package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/shard/jobmgr"
)

// limitsConfig is the limits section of a server config; `peloton dev`
// takes the same as flags. Absent values take the defaults.
type limitsConfig struct {
	// RequestBytes bounds request bodies and gRPC messages, except those
	// that carry a job spec (SpecRequestBytes).
	RequestBytes     byteSize `json:"requestBytes"`
	SpecRequestBytes byteSize `json:"specRequestBytes"`
	// InstancesPerJob: at most pb.MaxInstances.
	InstancesPerJob     uint32 `json:"instancesPerJob"`
	PendingTasksPerPool int64  `json:"pendingTasksPerPool"`
	// JobsPerRequest bounds the job specs of one CreateJobs call.
	JobsPerRequest int `json:"jobsPerRequest"`
	// InFlight bounds the calls served at once (default 16 per CPU, at
	// least 32); InFlightWait is how long a call waits for a free slot
	// before it is refused (429).
	InFlight     int      `json:"inFlight"`
	InFlightWait duration `json:"inFlightWait"`
}

// Bounds of the configurable limits.
const (
	minRequestBytes = 4 << 10
	maxRequestBytes = 1 << 30
	maxInFlight     = 100_000
	maxInFlightWait = 10 * time.Second
)

// check fills defaults and reports every out-of-range value.
func (l *limitsConfig) check(add func(field, msg string)) {
	l.fillDefaults()
	if l.RequestBytes < minRequestBytes || l.RequestBytes > maxRequestBytes {
		add("limits.requestBytes", fmt.Sprintf("must be between %d and %d bytes", minRequestBytes, maxRequestBytes))
	}
	if l.SpecRequestBytes < l.RequestBytes || l.SpecRequestBytes > maxRequestBytes {
		add("limits.specRequestBytes", fmt.Sprintf("must be between requestBytes (%d) and %d bytes", l.RequestBytes, maxRequestBytes))
	}
	if l.InstancesPerJob > pb.MaxInstances {
		add("limits.instancesPerJob", fmt.Sprintf("must be at most %d", pb.MaxInstances))
	}
	if l.PendingTasksPerPool < 1 {
		add("limits.pendingTasksPerPool", "must be at least 1")
	}
	if l.JobsPerRequest < 1 || l.JobsPerRequest > pb.MaxJobsPerRequest {
		add("limits.jobsPerRequest", fmt.Sprintf("must be between 1 and %d", pb.MaxJobsPerRequest))
	}
	if l.InFlight < 1 || l.InFlight > maxInFlight {
		add("limits.inFlight", fmt.Sprintf("must be between 1 and %d", maxInFlight))
	}
	if l.InFlightWait < 0 || l.InFlightWait > duration(maxInFlightWait) {
		add("limits.inFlightWait", fmt.Sprintf("must be between 0s and %s", maxInFlightWait))
	}
}

// fillDefaults sets every limit not given (zero) to its default.
func (l *limitsConfig) fillDefaults() {
	setDefault(&l.RequestBytes, gateway.DefaultRequestBytes)
	setDefault(&l.SpecRequestBytes, gateway.DefaultSpecRequestBytes)
	setDefault(&l.InstancesPerJob, jobmgr.DefaultInstancesPerJob)
	setDefault(&l.PendingTasksPerPool, jobmgr.DefaultPendingTasksPerPool)
	setDefault(&l.JobsPerRequest, jobmgr.DefaultJobsPerRequest)
	setDefault(&l.InFlight, gateway.DefaultInFlight())
	setDefault(&l.InFlightWait, duration(gateway.DefaultInFlightWait))
}

// setDefault sets *v to def when it is zero (not given).
func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

func (l *limitsConfig) gateway() gateway.Limits {
	return gateway.Limits{RequestBytes: int64(l.RequestBytes), SpecRequestBytes: int64(l.SpecRequestBytes),
		InFlight: l.InFlight, InFlightWait: time.Duration(l.InFlightWait), JobsPerRequest: l.JobsPerRequest}
}

func (l *limitsConfig) shard() jobmgr.Limits {
	return jobmgr.Limits{InstancesPerJob: l.InstancesPerJob, PendingTasksPerPool: l.PendingTasksPerPool, JobsPerRequest: l.JobsPerRequest}
}

// register adds the limits as flags of `peloton dev`.
func (l *limitsConfig) register(f *pflag.FlagSet) {
	f.Var(&l.RequestBytes, "limit-request-bytes", "largest request body or gRPC message, but for job create and update (default 1MiB)")
	f.Var(&l.SpecRequestBytes, "limit-spec-request-bytes", "largest job create or update request (default 64MiB)")
	f.Uint32Var(&l.InstancesPerJob, "limit-instances-per-job", jobmgr.DefaultInstancesPerJob, "most instances of one job")
	f.Int64Var(&l.PendingTasksPerPool, "limit-pending-tasks-per-pool", jobmgr.DefaultPendingTasksPerPool, "most tasks of one pool waiting to run")
	f.IntVar(&l.JobsPerRequest, "limit-jobs-per-request", jobmgr.DefaultJobsPerRequest, "most job specs of one batch create (CreateJobs)")
	f.IntVar(&l.InFlight, "limit-in-flight", 0, "most API calls served at once; more wait --limit-in-flight-wait, then get 429 (default 16 per CPU, at least 32)")
	f.Var(&l.InFlightWait, "limit-in-flight-wait", "how long a call waits for a free slot before it is refused (default 50ms)")
}

// byteSize reads 1048576, "1MiB", "512KiB" or "2GiB".
type byteSize int64

func (b *byteSize) UnmarshalJSON(data []byte) error {
	var n int64
	if err := json.Unmarshal(data, &n); err == nil {
		*b = byteSize(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("must be a number of bytes or a size like 64MiB")
	}
	return b.Set(s)
}

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<40)/mult {
		return fmt.Errorf("%q is not a size like 1048576, 512KiB, 64MiB or 1GiB", s)
	}
	*b = byteSize(n * mult)
	return nil
}

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }
func (b *byteSize) Type() string   { return "size" }

func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration like 50ms", s)
	}
	*d = duration(v)
	return nil
}

func (d *duration) String() string { return time.Duration(*d).String() }
func (d *duration) Type() string   { return "duration" }

// kebab turns a config field name into its flag's: inFlightWait → in-flight-wait.
func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
