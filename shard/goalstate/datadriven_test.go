package goalstate

import (
	"fmt"
	"github.com/peloton-federated/peloton/internal/datadriven"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
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
	case "drain":
		return drainStep(fields[1:], input)
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

func drainStep(args, input []string) (string, error) {
	in := DrainInput{Now: scenarioStart, SLA: map[model.JobID]*sla.Job{}}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		if k != "now" {
			return "", fmt.Errorf("unknown drain option %q", a)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return "", err
		}
		in.Now = scenarioStart.Add(d)
	}
	type job struct {
		ty        model.JobType
		revocable bool
		gang      uint32
		instances uint32
	}
	jobs := map[model.JobID]*job{}
	taskCount := map[model.HostID]int{} // tasks=N given
	for _, line := range input {
		f := strings.Fields(line)
		if len(f) < 2 {
			return "", fmt.Errorf("%q: too short", line)
		}
		switch f[0] {
		case "host":
			h := DrainHost{ID: model.HostID(f[1]), Tasks: -1}
			for _, o := range f[2:] {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "deadline":
					d, err := time.ParseDuration(v)
					if err != nil {
						return "", err
					}
					h.Deadline = scenarioStart.Add(d)
				case "down":
					h.Down = true
				case "tasks":
					n, err := strconv.Atoi(v)
					if err != nil {
						return "", err
					}
					h.Tasks = n
				default:
					return "", fmt.Errorf("unknown host option %q", o)
				}
			}
			in.Hosts = append(in.Hosts, h)
		case "job":
			if len(f) < 3 {
				return "", fmt.Errorf("%q: job ID TYPE ...", line)
			}
			ty, err := parseJobType(f[2])
			if err != nil {
				return "", err
			}
			j := &job{ty: ty, gang: 1, instances: 1}
			s := &sla.Job{Limit: 1}
			var down []uint32
			for _, o := range f[3:] {
				k, v, _ := strings.Cut(o, "=")
				if k == "revocable" {
					j.revocable = true
					continue
				}
				if k == "down" {
					for _, id := range strings.Split(v, ",") {
						n, err := strconv.ParseUint(id, 10, 32)
						if err != nil {
							return "", err
						}
						down = append(down, uint32(n))
					}
					continue
				}
				n, err := strconv.ParseUint(v, 10, 32)
				if err != nil {
					return "", fmt.Errorf("job option %q: %w", o, err)
				}
				switch k {
				case "limit":
					s.Limit = uint32(n)
				case "instances":
					j.instances = uint32(n)
				case "gang":
					j.gang = uint32(n)
				default:
					return "", fmt.Errorf("unknown job option %q", o)
				}
			}
			jobs[model.JobID(f[1])] = j
			if ty != model.JobBatch {
				s.Instances = instances(j.instances, down...)
				in.SLA[model.JobID(f[1])] = s
			}
		case "run":
			if len(f) < 3 {
				return "", fmt.Errorf("%q: run JOB/INSTANCE HOST", line)
			}
			name, inst, _ := strings.Cut(f[1], "/")
			j := jobs[model.JobID(name)]
			n, err := strconv.ParseUint(inst, 10, 32)
			if j == nil || err != nil || uint32(n) >= j.instances {
				return "", fmt.Errorf("%q: no such instance", line)
			}
			r := DrainRun{Job: model.JobID(name), Instance: uint32(n), Host: model.HostID(f[2]), Type: j.ty, Revocable: j.revocable}
			first := r.Instance / j.gang * j.gang
			for id := first; id < min(first+j.gang, j.instances); id++ {
				r.Gang = append(r.Gang, id)
			}
			for _, o := range f[3:] {
				if o != "restarting" {
					return "", fmt.Errorf("unknown run option %q", o)
				}
				r.Restarting = true
			}
			in.Runs = append(in.Runs, r)
			taskCount[r.Host]++
		default:
			return "", fmt.Errorf("unknown drain line %q", line)
		}
	}
	for i := range in.Hosts {
		if in.Hosts[i].Tasks < 0 {
			in.Hosts[i].Tasks = taskCount[in.Hosts[i].ID]
		}
	}
	plan := Drain(in)
	var out []string
	for _, a := range plan.Actions {
		l := fmt.Sprintf("%s %s/%d on %s:", a.Kind, a.Job, a.Instance, a.Host)
		if a.Reason != "" {
			l += " " + a.Reason
		}
		out = append(out, l+" "+a.Message)
	}
	for _, h := range plan.Drained {
		out = append(out, "drained "+string(h))
	}
	if len(out) == 0 {
		return "nothing", nil
	}
	return strings.Join(out, "\n"), nil
}
