package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func (a *app) taskCommand() *cobra.Command {
	task := &cobra.Command{Use: "task", Short: "Inspect, stop and restart the tasks of a job, read their logs"}
	task.AddCommand(a.taskListCommand(), a.taskGetCommand(), a.taskLogsCommand(), a.taskStopCommand(), a.taskRestartCommand())
	return task
}

// parseInstance reads an instance number argument.
func parseInstance(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, &exitError{code: ExitError, msg: fmt.Sprintf("instance %q must be a number (0, 1, 2, ...)", s)}
	}
	return uint32(n), nil
}

func (a *app) taskListCommand() *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:   "list JOB_ID",
		Short: "List the tasks of a job",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			req := &pelotonv1.ListTasksRequest{JobId: argv[0]}
			for _, s := range states {
				n, err := pelotonv1.ParseEnumName(pelotonv1.TaskState(0).Descriptor(), s)
				if err != nil {
					return &exitError{code: ExitError, msg: "--state: " + err.Error()}
				}
				req.States = append(req.States, pelotonv1.TaskState(n))
			}
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.tasks.ListTasks(ctx, req)
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			return writeTaskTable(cmd.OutOrStdout(), resp.GetTasks(), a.clock.Now())
		}),
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only tasks in these states (pending, running, failed, ...); repeat or separate with commas")
	return cmd
}

func writeTaskTable(w io.Writer, tasks []*pelotonv1.Task, now time.Time) error {
	t := newTable(w, "INSTANCE", "STATE", "HEALTH", "RUN", "CONFIG", "HOST", "PORTS", "EXIT", "STARTED", "REASON")
	for _, task := range tasks {
		exit := ""
		if task.GetCompletionTime() != nil {
			exit = strconv.Itoa(int(task.GetExitCode()))
		}
		t.row(strconv.FormatUint(uint64(task.GetInstance()), 10), shortState(task.GetState()), healthText(task),
			strconv.FormatUint(uint64(task.GetRun()), 10), configVersionText(task.GetConfigVersion()), task.GetHost(),
			portsText(task.GetPorts()), exit, ago(task.GetStartTime(), now), task.GetReason())
	}
	return t.flush()
}

// healthText sums up a task's probes: its health check's verdict, with
// its readiness after a slash when it has a readiness probe.
func healthText(t *pelotonv1.Task) string {
	h := probeText(t.GetHealth())
	if r := t.GetReady(); r != pelotonv1.HealthState_HEALTH_STATE_UNSPECIFIED {
		if h == "" {
			h = "-"
		}
		h += "/" + map[pelotonv1.HealthState]string{
			pelotonv1.HealthState_HEALTH_STATE_UNKNOWN:   "UNKNOWN",
			pelotonv1.HealthState_HEALTH_STATE_HEALTHY:   "READY",
			pelotonv1.HealthState_HEALTH_STATE_UNHEALTHY: "NOT_READY",
		}[r]
	}
	return h
}

func probeText(s pelotonv1.HealthState) string {
	if s == pelotonv1.HealthState_HEALTH_STATE_UNSPECIFIED {
		return ""
	}
	return pelotonv1.ShortEnumName(s)
}

// portsText renders assigned ports as "http=31002,admin=9090", by name.
func portsText(ports map[string]uint32) string {
	names := make([]string, 0, len(ports))
	for n := range ports {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatUint(uint64(ports[n]), 10)
	}
	return strings.Join(parts, ",")
}

func (a *app) taskGetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get JOB_ID INSTANCE",
		Short: "Show one task, with why it is where it is",
		Args:  args(cobra.ExactArgs(2)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			instance, err := parseInstance(argv[1])
			if err != nil {
				return err
			}
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.tasks.GetTask(ctx, &pelotonv1.GetTaskRequest{JobId: argv[0], Instance: instance})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp.GetTask())
			}
			return writeTask(cmd.OutOrStdout(), resp.GetTask(), a.clock.Now())
		}),
	}
}

func writeTask(w io.Writer, t *pelotonv1.Task, now time.Time) error {
	exit := ""
	if t.GetCompletionTime() != nil {
		exit = strconv.Itoa(int(t.GetExitCode()))
	}
	return fields(w,
		"Job", t.GetJobId(),
		"Instance", strconv.FormatUint(uint64(t.GetInstance()), 10),
		"State", shortState(t.GetState()),
		"Goal state", setState(t.GetGoalState()),
		"Run", strconv.FormatUint(uint64(t.GetRun()), 10),
		"Config version", configVersionText(t.GetConfigVersion()),
		"Host", t.GetHost(),
		"Pinned to", t.GetPinnedHost(),
		"Cluster", t.GetCluster(),
		"Health", probeText(t.GetHealth()),
		"Readiness", probeText(t.GetReady()),
		"Ports", portsText(t.GetPorts()),
		"Reason", t.GetReason(),
		"Message", t.GetMessage(),
		"Exit code", exit,
		"Started", timestamp(t.GetStartTime(), now),
		"Completed", timestamp(t.GetCompletionTime(), now),
		"Updated", timestamp(t.GetUpdateTime(), now),
		"Retry after", timestamp(t.GetRetryAfter(), now),
	)
}

// configVersionText renders a config version, "" when unknown (0).
func configVersionText(v uint64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatUint(v, 10)
}

// setState is shortState, or "" for the unspecified zero value.
func setState(s pelotonv1.TaskState) string {
	if s == pelotonv1.TaskState_TASK_STATE_UNSPECIFIED {
		return ""
	}
	return shortState(s)
}

func (a *app) taskStopCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "stop JOB_ID [INSTANCE...]",
		Short: "Stop some instances of a job, or all of them",
		Long: `Stop some instances of a job, or all of them (no instance given).
Stopping running instances of a service asks its SLA first: when that would
take more instances down than sla.maxUnavailable allows, the stop is refused
and nothing changes; --force stops them anyway.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: a.onInstances(func(ctx context.Context, c *clients, job string, instances []uint32) (tasksAnswer, error) {
			return c.tasks.StopTasks(ctx, &pelotonv1.StopTasksRequest{JobId: job, Instances: instances, Force: force})
		}),
	}
	cmd.Flags().BoolVar(&force, "force", false, "stop running instances of a service even beyond its SLA")
	return cmd
}

func (a *app) taskRestartCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "restart JOB_ID INSTANCE...",
		Short: "Restart running instances of a job: new runs on the same config",
		Long: `Restart instances of a job: their current runs are killed and new runs
start, on the same config (a gang restarts whole; a restart is not a
failure). Only instances that run or wait to run can be restarted.
Restarting instances of a service asks its SLA first: when that would take
more instances down than sla.maxUnavailable allows, the restart is refused
and nothing changes; --force restarts them anyway.`,
		Args: args(cobra.MinimumNArgs(2)),
		RunE: a.onInstances(func(ctx context.Context, c *clients, job string, instances []uint32) (tasksAnswer, error) {
			return c.tasks.RestartTasks(ctx, &pelotonv1.RestartTasksRequest{JobId: job, Instances: instances, Force: force})
		}),
	}
	cmd.Flags().BoolVar(&force, "force", false, "restart running instances of a service even beyond its SLA")
	return cmd
}

// tasksAnswer is an answer that lists tasks (StopTasks, RestartTasks).
type tasksAnswer interface {
	proto.Message
	GetTasks() []*pelotonv1.Task
}

// onInstances runs a command on JOB_ID INSTANCE...: it makes one call with
// the instances and prints the tasks answered.
func (a *app) onInstances(call func(ctx context.Context, c *clients, job string, instances []uint32) (tasksAnswer, error)) func(*cobra.Command, []string) error {
	return a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
		var instances []uint32
		for _, s := range argv[1:] {
			n, err := parseInstance(s)
			if err != nil {
				return err
			}
			instances = append(instances, n)
		}
		ctx, cancel := a.rpc(cmd.Context())
		defer cancel()
		resp, err := call(ctx, c, argv[0], instances)
		if err != nil {
			return err
		}
		if a.output != "table" {
			return writeStructured(cmd.OutOrStdout(), a.output, resp)
		}
		return writeTaskTable(cmd.OutOrStdout(), resp.GetTasks(), a.clock.Now())
	})
}

func (a *app) taskLogsCommand() *cobra.Command {
	var stderr, follow bool
	var tail int
	cmd := &cobra.Command{
		Use:   "logs JOB_ID INSTANCE",
		Short: "Print a task's output (stdout, or stderr with --stderr)",
		Long: `Print a task's output from the host it ran on.

--tail N prints only the last N lines; --follow keeps printing new output
until the task has ended and its log has been read to the end.`,
		Args: args(cobra.ExactArgs(2)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			instance, err := parseInstance(argv[1])
			if err != nil {
				return err
			}
			l := &logReader{app: a, c: c, job: argv[0], instance: instance, stream: "stdout",
				out: cmd.OutOrStdout(), notes: cmd.ErrOrStderr()}
			if stderr {
				l.stream = "stderr"
			}
			return l.print(cmd.Context(), tail, follow)
		}),
	}
	cmd.Flags().BoolVar(&stderr, "stderr", false, "read standard error instead of standard output")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing output until the task ends")
	cmd.Flags().IntVar(&tail, "tail", -1, "print only the last N lines (-1: all)")
	return cmd
}
