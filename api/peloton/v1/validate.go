package pelotonv1

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// ValidateJobSpec checks a spec's meaning and returns every problem with its
// path; nil means valid. Zero values of defaulted fields (type, pool,
// max_attempts, kill_grace_period_seconds) are accepted and mean "default".
func ValidateJobSpec(s *JobSpec) []FieldError {
	if s == nil {
		return []FieldError{{Message: "the job spec is missing"}}
	}
	v := &specChecker{}
	v.name(s.GetName())
	if !knownJobType(s.GetType()) {
		v.add("type", fmt.Sprintf("unknown value %d", int32(s.GetType())))
	}
	if msg := poolPathProblem(s.GetPool()); msg != "" {
		v.add("pool", msg)
	}
	if p := s.GetPriority(); p < 0 || p > MaxPriority {
		v.add("priority", fmt.Sprintf("must be between 0 and %d", MaxPriority))
	}
	v.instances(s)
	v.gang(s)
	v.failover(s.GetFailover())
	if s.GetMaxAttempts() > MaxAttemptsLimit {
		v.add("max_attempts", fmt.Sprintf("must be at most %d", MaxAttemptsLimit))
	}
	v.labels(s)
	v.labelKeys(s)
	if s.GetTask() == nil {
		v.add("task", "is required")
	} else {
		v.task("task", s.GetTask(), false)
		v.volumesAllowed("task", s.GetType(), s.GetTask())
	}
	v.placement(s)
	v.problems = append(v.problems, ClusterPolicyProblems("clusters", s.GetClusters())...)
	v.sla(s)
	v.overrides(s)
	SortFieldErrors(v.problems)
	return v.problems
}

// name checks a job's name: required, bounded and printable.
func (v *specChecker) name(name string) {
	switch {
	case strings.TrimSpace(name) == "":
		v.add("name", "is required")
	case len([]rune(name)) > MaxJobNameLength:
		v.add("name", fmt.Sprintf("must be at most %d characters", MaxJobNameLength))
	case hasControl(name):
		v.add("name", "must not contain control characters")
	}
}

// knownJobType says whether t is a job type this version knows; unspecified
// is known and means batch.
func knownJobType(t JobType) bool {
	switch t {
	case JobType_JOB_TYPE_UNSPECIFIED, JobType_JOB_TYPE_BATCH, JobType_JOB_TYPE_SERVICE, JobType_JOB_TYPE_STATEFUL, JobType_JOB_TYPE_DAEMON:
		return true
	}
	return false
}

// instances checks the instance count and max_running against it; a daemon
// job has its own rules.
func (v *specChecker) instances(s *JobSpec) {
	instances := s.GetInstances()
	switch {
	case s.GetType() == JobType_JOB_TYPE_DAEMON:
		v.daemon(s)
	case instances < 1 || instances > MaxInstances:
		v.add("instances", fmt.Sprintf("must be between 1 and %d", MaxInstances))
	case s.GetMaxRunning() > instances:
		v.add("max_running", fmt.Sprintf("must not exceed instances (%d)", instances))
	}
}

// gang checks gang_size against a valid instance count, max_running against
// the gang, and that gang_restart has a gang to restart.
func (v *specChecker) gang(s *JobSpec) {
	instances := s.GetInstances()
	if g := s.GetGangSize(); g > 1 && instances >= 1 && instances <= MaxInstances {
		switch {
		case g > instances:
			v.add("gang_size", fmt.Sprintf("must not exceed instances (%d)", instances))
		case instances%g != 0:
			v.add("gang_size", fmt.Sprintf("instances (%d) must be a multiple of it", instances))
		}
		if m := s.GetMaxRunning(); m > 0 && m < g {
			v.add("max_running", fmt.Sprintf("must be 0 or at least gang_size (%d): a gang runs whole", g))
		}
	}
	if s.GetGangRestart() && s.GetGangSize() <= 1 {
		v.add("gang_restart", "needs gang_size > 1")
	}
}

// failover checks a failover policy: regions only with mode REGIONS, and
// there at least one and at most MaxFailoverRegions, none empty.
func (v *specChecker) failover(f *FailoverPolicy) {
	if f == nil {
		return
	}
	regions := f.GetRegions()
	switch f.GetMode() {
	case FailoverPolicy_MODE_UNSPECIFIED, FailoverPolicy_MODE_NONE, FailoverPolicy_MODE_ANY:
		if len(regions) > 0 {
			v.add("failover.regions", "only allowed with mode REGIONS")
		}
	case FailoverPolicy_MODE_REGIONS:
		if len(regions) == 0 {
			v.add("failover.regions", "at least one region is needed with mode REGIONS")
		} else if len(regions) > MaxFailoverRegions {
			v.add("failover.regions", fmt.Sprintf("at most %d regions", MaxFailoverRegions))
		}
		for i, r := range regions {
			if strings.TrimSpace(r) == "" {
				v.add(fmt.Sprintf("failover.regions[%d]", i), "must not be empty")
			}
		}
	default:
		v.add("failover.mode", fmt.Sprintf("unknown value %d", int32(f.GetMode())))
	}
}

// labelKeys refuses empty label keys and keys with control characters.
func (v *specChecker) labelKeys(s *JobSpec) {
	for _, key := range sortedStringKeys(s.GetLabels()) {
		if strings.TrimSpace(key) == "" || hasControl(key) {
			v.add(mapEntryPath("labels", key), "key must be a non-empty printable string")
		}
	}
}

// ApplyJobSpecDefaults fills the fields whose zero value means "default".
func ApplyJobSpecDefaults(s *JobSpec) {
	if s == nil {
		return
	}
	if s.Type == JobType_JOB_TYPE_UNSPECIFIED {
		s.Type = JobType_JOB_TYPE_BATCH
	}
	if s.Pool == "" {
		s.Pool = DefaultPool
	}
	if s.Revocable {
		s.Preemptible = true
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.Task != nil && s.Task.KillGracePeriodSeconds == 0 {
		s.Task.KillGracePeriodSeconds = DefaultKillGracePeriodSeconds
	}
}

type specChecker struct{ problems []FieldError }

func (v *specChecker) add(path, msg string) {
	v.problems = append(v.problems, FieldError{Path: path, Message: msg})
}

// task checks a job's task, or with override an instance override's, where
// every field may be left out and a zero resource amount keeps the job's.
func (v *specChecker) task(path string, t *TaskSpec, override bool) {
	switch {
	case (override || t.GetContainer() != nil) && t.GetCommand() == "":
	case strings.TrimSpace(t.GetCommand()) == "":
		v.add(joinPath(path, "command"), "is required")
	case strings.ContainsRune(t.GetCommand(), 0):
		v.add(joinPath(path, "command"), "must not contain NUL bytes")
	}
	v.sizes(path, t)
	for i, arg := range t.GetArgs() {
		if strings.ContainsRune(arg, 0) {
			v.add(fmt.Sprintf("%s.args[%d]", path, i), "must not contain NUL bytes")
		}
	}
	for _, key := range sortedStringKeys(t.GetEnv()) {
		epath := mapEntryPath(joinPath(path, "env"), key)
		if !isEnvName(key) {
			v.add(epath, "not a valid environment variable name (letters, digits, '_'; not starting with a digit)")
		} else if strings.ContainsRune(t.GetEnv()[key], 0) {
			v.add(epath, "must not contain NUL bytes")
		}
	}
	if r := t.GetResources(); r == nil {
		if !override {
			v.add(joinPath(path, "resources"), "is required (cpu and mem_mb at least)")
		}
	} else {
		v.resources(joinPath(path, "resources"), r, !override)
	}
	if n := len(t.GetConstraints()); n > MaxConstraints {
		v.add(joinPath(path, "constraints"), fmt.Sprintf("has %d constraints, more than %d", n, MaxConstraints))
	}
	for i, c := range t.GetConstraints() {
		v.constraint(fmt.Sprintf("%s.constraints[%d]", path, i), c, 1)
	}
	v.workload(path, t)
}

// resources checks amounts; with required, cpu and mem_mb must be > 0.
func (v *specChecker) resources(path string, r *Resources, required bool) {
	check := func(field string, x float64, positive bool, kind amountKind) {
		if msg := amountProblem(x, positive, kind); msg != "" {
			v.add(joinPath(path, field), msg)
		} else if msg := resourceCeiling(field, x); msg != "" {
			v.add(joinPath(path, field), msg)
		}
	}
	check("cpu", r.GetCpu(), required, cores)
	check("mem_mb", r.GetMemMb(), required, whole)
	check("disk_mb", r.GetDiskMb(), false, whole)
	check("gpu", r.GetGpu(), false, whole)
}

// amountKind is the granularity of a resource amount: the scheduler keeps
// amounts as integers in their smallest unit, so cpu may have at most three
// decimals (millicores) and the others none (MiB, devices).
type amountKind uint8

const (
	whole  amountKind = iota
	cores             // cpu: at most three decimals
	weight            // a share: any finite number
)

// amountProblem says what is wrong with one amount, or "".
func amountProblem(x float64, positive bool, kind amountKind) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "must be a finite number"
	case positive && x <= 0:
		return "must be > 0"
	case x < 0:
		return "must be >= 0"
	case kind == cores && decimals(x) > 3:
		return "must be a multiple of 0.001 cores"
	case kind == whole && decimals(x) > 0:
		return "must be a whole number"
	}
	return ""
}

// decimals counts the digits after the decimal point of x written as the
// shortest decimal that reads back as x: what the client wrote.
func decimals(x float64) int {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func (v *specChecker) constraint(path string, c *Constraint, depth int) {
	if c == nil {
		v.add(path, "must not be empty")
		return
	}
	if depth > MaxConstraintDepth {
		v.add(path, fmt.Sprintf("nested too deeply (at most %d levels)", MaxConstraintDepth))
		return
	}
	composite := len(c.GetAllOf()) > 0 || len(c.GetAnyOf()) > 0
	if composite {
		if c.GetKey() != "" || c.GetOp() != ConstraintOp_CONSTRAINT_OP_UNSPECIFIED || len(c.GetValues()) > 0 {
			v.add(path, "sets key/op/values together with all_of/any_of; use one or the other")
		}
		if len(c.GetAllOf()) > 0 && len(c.GetAnyOf()) > 0 {
			v.add(path, "sets both all_of and any_of; nest one inside the other")
		}
		for i, sub := range c.GetAllOf() {
			v.constraint(fmt.Sprintf("%s.all_of[%d]", path, i), sub, depth+1)
		}
		for i, sub := range c.GetAnyOf() {
			v.constraint(fmt.Sprintf("%s.any_of[%d]", path, i), sub, depth+1)
		}
		return
	}
	if strings.TrimSpace(c.GetKey()) == "" {
		v.add(joinPath(path, "key"), "is required")
	}
	v.constraintSizes(path, c)
	values := joinPath(path, "values")
	n := len(c.GetValues())
	op := c.GetOp()
	switch op {
	case ConstraintOp_CONSTRAINT_OP_UNSPECIFIED:
		v.add(joinPath(path, "op"), "is required (one of "+enumChoices(op.Descriptor())+")")
	case ConstraintOp_CONSTRAINT_OP_EQUALS, ConstraintOp_CONSTRAINT_OP_NOT_EQUALS:
		if n != 1 {
			v.add(values, fmt.Sprintf("must hold exactly one value for %s (got %d)", shortLower(op), n))
		}
	case ConstraintOp_CONSTRAINT_OP_IN, ConstraintOp_CONSTRAINT_OP_NOT_IN:
		if n == 0 {
			v.add(values, fmt.Sprintf("must hold at least one value for %s", shortLower(op)))
		}
	case ConstraintOp_CONSTRAINT_OP_EXISTS, ConstraintOp_CONSTRAINT_OP_NOT_EXISTS:
		if n != 0 {
			v.add(values, fmt.Sprintf("must be empty for %s", shortLower(op)))
		}
	default:
		v.add(joinPath(path, "op"), fmt.Sprintf("unknown value %d", int32(op)))
	}
}

func shortLower(v protoreflect.Enum) string { return strings.ToLower(ShortEnumName(v)) }

// poolPathProblem says what is wrong with a pool path, or "" if it is fine.
// Empty means the default pool.
func poolPathProblem(pool string) string {
	if pool == "" || pool == "/" {
		return ""
	}
	const want = `must be an absolute path such as "/" or "/team/batch"`
	if !strings.HasPrefix(pool, "/") || strings.HasSuffix(pool, "/") {
		return want
	}
	for _, seg := range strings.Split(pool[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || hasControl(seg) || strings.ContainsAny(seg, " \t") {
			return want
		}
	}
	return ""
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
		if !letter && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
