package pelotonv1

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// Sizes a job spec may not exceed, whatever the server's configuration:
// every client checks them before sending and the server again on receipt.
// A server may lower the instance count further (its limits section).
//
// The argument and environment bounds follow Linux: execve refuses a
// single argument or variable longer than MAX_ARG_STRLEN (128 KiB), and the
// whole command line and environment beyond ARG_MAX (commonly 2 MiB).
const (
	MaxCommandBytes = 128 << 10
	MaxArgs         = 4096
	MaxArgBytes     = 128 << 10
	MaxEnvVars      = 4096
	MaxEnvNameBytes = 1024
	MaxEnvBytes     = 128 << 10
	// MaxCommandLineBytes bounds command, arguments and environment
	// (names and values) together.
	MaxCommandLineBytes = 1 << 20

	MaxLabels          = 128
	MaxLabelKeyBytes   = 256
	MaxLabelValueBytes = 4096

	MaxConstraints           = 64
	MaxConstraintValues      = 1024
	MaxConstraintStringBytes = 1024

	MaxFailoverRegions = 64
	// MaxInstanceRangesBytes bounds the text of one override's instances.
	MaxInstanceRangesBytes = 64 << 10

	// Resources of one task. No host this scheduler has run on comes near
	// them; they keep amounts far from the integer limits of the units the
	// shard keeps them in. A region refuses, at create, a task larger than
	// any of its hosts.
	MaxTaskCPU    = 100_000 // cores
	MaxTaskMemMB  = 1 << 30 // 1 PiB
	MaxTaskDiskMB = 1 << 32 // 4 PiB
	MaxTaskGPU    = 1024
)

// maxResource is the most a task may ask of each resource.
var maxResource = map[string]float64{"cpu": MaxTaskCPU, "mem_mb": MaxTaskMemMB, "disk_mb": MaxTaskDiskMB, "gpu": MaxTaskGPU}

// sizes checks the sizes of a task's command, arguments and environment.
func (v *specChecker) sizes(path string, t *TaskSpec) {
	total := len(t.GetCommand())
	if n := len(t.GetCommand()); n > MaxCommandBytes {
		v.add(joinPath(path, "command"), tooLong(n, MaxCommandBytes))
	}
	if n := len(t.GetArgs()); n > MaxArgs {
		v.add(joinPath(path, "args"), fmt.Sprintf("has %d arguments, more than %d", n, MaxArgs))
	}
	for i, arg := range t.GetArgs() {
		total += len(arg)
		if len(arg) > MaxArgBytes {
			v.add(fmt.Sprintf("%s.args[%d]", path, i), tooLong(len(arg), MaxArgBytes))
		}
	}
	if n := len(t.GetEnv()); n > MaxEnvVars {
		v.add(joinPath(path, "env"), fmt.Sprintf("has %d variables, more than %d", n, MaxEnvVars))
	}
	for _, key := range sortedStringKeys(t.GetEnv()) {
		value := t.GetEnv()[key]
		total += len(key) + len(value)
		switch {
		case len(key) > MaxEnvNameBytes:
			v.add(mapEntryPath(joinPath(path, "env"), truncated(key)), "name "+tooLong(len(key), MaxEnvNameBytes))
		case len(value) > MaxEnvBytes:
			v.add(mapEntryPath(joinPath(path, "env"), key), tooLong(len(value), MaxEnvBytes))
		}
	}
	if total > MaxCommandLineBytes {
		v.add(path, fmt.Sprintf("command, args and env take %d bytes together, more than %d", total, MaxCommandLineBytes))
	}
}

// labels checks the count and sizes of a job's labels.
func (v *specChecker) labels(s *JobSpec) {
	if n := len(s.GetLabels()); n > MaxLabels {
		v.add("labels", fmt.Sprintf("has %d labels, more than %d", n, MaxLabels))
	}
	for _, key := range sortedStringKeys(s.GetLabels()) {
		switch value := s.GetLabels()[key]; {
		case len(key) > MaxLabelKeyBytes:
			v.add(mapEntryPath("labels", truncated(key)), "key "+tooLong(len(key), MaxLabelKeyBytes))
		case len(value) > MaxLabelValueBytes:
			v.add(mapEntryPath("labels", key), tooLong(len(value), MaxLabelValueBytes))
		}
	}
}

// constraintSizes checks the size of one simple constraint.
func (v *specChecker) constraintSizes(path string, c *Constraint) {
	if n := len(c.GetKey()); n > MaxConstraintStringBytes {
		v.add(joinPath(path, "key"), tooLong(n, MaxConstraintStringBytes))
	}
	if n := len(c.GetValues()); n > MaxConstraintValues {
		v.add(joinPath(path, "values"), fmt.Sprintf("has %d values, more than %d", n, MaxConstraintValues))
	}
	for i, val := range c.GetValues() {
		if len(val) > MaxConstraintStringBytes {
			v.add(fmt.Sprintf("%s.values[%d]", path, i), tooLong(len(val), MaxConstraintStringBytes))
		}
	}
}

// resourceCeiling says what is wrong with an amount above the most a task
// may ask, or "".
func resourceCeiling(field string, x float64) string {
	if limit, ok := maxResource[field]; ok && !math.IsNaN(x) && x > limit {
		return fmt.Sprintf("must be at most %s", formatAmount(limit))
	}
	return ""
}

func formatAmount(x float64) string { return fmt.Sprintf("%.0f", x) }

func tooLong(n, limit int) string {
	return fmt.Sprintf("is %d bytes, more than %d", n, limit)
}

// truncated shortens a key too long to repeat whole in a message.
func truncated(s string) string {
	const keep = 32
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
