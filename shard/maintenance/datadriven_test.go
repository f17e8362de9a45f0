package maintenance

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/internal/datadriven"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/sla"
)

// The scenario files of testdata run drain steps. Each case:
//
//	drain now=10m     decides a drain step over hosts, jobs and runs:
//	host ID [deadline=15m] [down] [tasks=N]
//	job ID TYPE [limit=N] [instances=N] [gang=N] [down=1,2] [revocable]
//	run JOB/INSTANCE HOST [restarting]
//	                  a host's tasks default to the runs given on it; a
//	                  job's SLA view is its instances, all available but
//	                  those listed down. Output: the actions in order,
//	                  then the hosts drained.
//
// Times are offsets from the start of the scenario. Run with -rewrite to
// regenerate the expected output after a deliberate change, then review
// the diff.
func TestScenarios(t *testing.T) {
	datadriven.RunFiles(t, "testdata", func(t *testing.T) datadriven.Runner {
		return func(c datadriven.Case) string {
			fields := strings.Fields(c.Command)
			if fields[0] != "drain" {
				t.Fatalf("%s: unknown command %q", c.Where, fields[0])
			}
			actual, err := drainStep(fields[1:], c.Input)
			if err != nil {
				t.Fatalf("%s: %v", c.Where, err)
			}
			return actual
		}
	})
}

var scenarioStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

var jobTypes = map[string]model.JobType{"batch": model.JobBatch, "service": model.JobService, "stateful": model.JobStateful, "daemon": model.JobDaemon}

func parseJobType(s string) (model.JobType, error) {
	if ty, ok := jobTypes[s]; ok {
		return ty, nil
	}
	return 0, fmt.Errorf("unknown job type %q", s)
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
