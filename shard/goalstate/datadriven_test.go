package goalstate

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"

	"github.com/peloton-federated/peloton/shard/model"
)

// Scenario files are sequences of commands. Each is a command line, input
// lines, a "----" line, then the expected output up to a blank line. Lines
// starting with '#' before a command are comments. Times are offsets from
// the start of the scenario. Commands:
//
//	task TYPE [attempts=N] [backoff=BASE/MAX] [gang] [gang-restart]
//	at=5s STATE [reason=R] [stop] [restart=R] [-- message]
//	                  follows one task through the ends of its runs: each
//	                  input line ends the current run at a time, in a
//	                  state, with a reason and message; stop sets the
//	                  task's goal to stop first, restart=R ends it under a
//	                  restart of its gang. The task takes what each
//	                  decision records, and starts its next run when the
//	                  decision relaunches it or restarts its gang. Output:
//	                  one line per end.
//	drain now=10m     decides a drain step over hosts, jobs and runs:
//	host ID [deadline=15m] [down] [tasks=N]
//	job ID TYPE [limit=N] [instances=N] [gang=N] [down=1,2] [revocable]
//	run JOB/INSTANCE HOST [restarting]
//	                  a host's tasks default to the runs given on it; a
//	                  job's SLA view is its instances, all available but
//	                  those listed down. Output: the actions in order,
//	                  then the hosts drained.
//
// Run with -rewrite to regenerate the expected output after a deliberate
// change, then review the diff.
func TestScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		return func(c datadriven.Case) string {
			actual, err := runCommand(c.Command, c.Input)
			if err != nil {
				t.Fatalf("%s: %v", c.Where, err)
			}
			return actual
		}
	})
}

func runCommand(command string, input []string) (string, error) {
	fields := strings.Fields(command)
	switch fields[0] {
	case "task":
		return taskLife(fields[1:], input)
	}
	return "", fmt.Errorf("unknown command %q", fields[0])
}

var scenarioStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

var jobTypes = map[string]model.JobType{"batch": model.JobBatch, "service": model.JobService, "stateful": model.JobStateful, "daemon": model.JobDaemon}

func parseJobType(s string) (model.JobType, error) {
	if ty, ok := jobTypes[s]; ok {
		return ty, nil
	}
	return 0, fmt.Errorf("unknown job type %q", s)
}

func parseTaskState(s string) (model.TaskState, error) {
	if st, ok := model.ParseTaskState(s); ok {
		return st, nil
	}
	return 0, fmt.Errorf("unknown task state %q", s)
}

// offset prints a time as its offset from the scenario's start.
func offset(at time.Time) string {
	if at.IsZero() {
		return "-"
	}
	return at.Sub(scenarioStart).String()
}

func taskLife(args, input []string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("task needs a job type")
	}
	ty, err := parseJobType(args[0])
	if err != nil {
		return "", err
	}
	in := RunEnd{Instance: 0, Run: 1, Type: ty,
		Policy: RetryPolicy{MaxAttempts: 1, Backoff: Backoff{Base: time.Second, Max: time.Minute}}}
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "attempts":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return "", fmt.Errorf("attempts: %w", err)
			}
			in.Policy.MaxAttempts = uint32(n)
		case "backoff":
			b, m, _ := strings.Cut(v, "/")
			if in.Policy.Backoff.Base, err = time.ParseDuration(b); err != nil {
				return "", err
			}
			if in.Policy.Backoff.Max, err = time.ParseDuration(m); err != nil {
				return "", err
			}
		case "gang":
			in.Gang = true
		case "gang-restart":
			in.Gang, in.Policy.GangRestart = true, true
		default:
			return "", fmt.Errorf("unknown task option %q", a)
		}
	}
	var out []string
	done := false
	for _, line := range input {
		if done {
			return "", fmt.Errorf("%q: the task has ended", line)
		}
		spec, msg, _ := strings.Cut(line, " -- ")
		fields := strings.Fields(spec)
		if len(fields) < 2 || !strings.HasPrefix(fields[0], "at=") {
			return "", fmt.Errorf("%q: want at=DURATION STATE ...", line)
		}
		at, err := time.ParseDuration(strings.TrimPrefix(fields[0], "at="))
		if err != nil {
			return "", err
		}
		if in.Ended, err = parseTaskState(fields[1]); err != nil {
			return "", err
		}
		in.Now, in.Message, in.EndReason, in.Restart = scenarioStart.Add(at), strings.TrimSpace(msg), "", nil
		for _, f := range fields[2:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "reason":
				in.EndReason = v
			case "stop":
				in.Stopping = true
			case "restart":
				in.Restart = &GangRestart{Reason: v, Message: strings.ToLower(v)}
			default:
				return "", fmt.Errorf("unknown end option %q", f)
			}
		}
		d := DecideRunEnd(in)
		out = append(out, fmt.Sprintf("run %d %s at %s: %s", in.Run, in.Ended, at, describeRunEnd(d)))
		in.Reason, in.Failures, in.RetryAfter = d.Reason, d.Failures, d.RetryAfter
		switch d.Action {
		case RunEndFinish, RunEndGiveUp:
			done = true
		case RunEndRelaunch, RunEndRestartGang, RunEndGangMember:
			in.Run++
		}
	}
	return strings.Join(out, "\n"), nil
}

func describeRunEnd(d RunEndDecision) string {
	var b strings.Builder
	b.WriteString(d.Action.String())
	if d.Action == RunEndNone {
		return b.String()
	}
	if d.Action != RunEndRelaunch {
		b.WriteString(" " + d.State.String())
	}
	if d.StopGang {
		b.WriteString(" +stop-gang")
	}
	if d.Action == RunEndRelaunch || d.Action == RunEndRestartGang {
		fmt.Fprintf(&b, " not-before=%s", offset(d.RetryAfter))
	}
	fmt.Fprintf(&b, " failures=%d %s %q", d.Failures, d.Reason, d.Message)
	if d.Action == RunEndRestartGang {
		fmt.Fprintf(&b, " gang: %s %q", d.GangReason, d.GangMessage)
	}
	return b.String()
}
