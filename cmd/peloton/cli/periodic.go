package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/spf13/cobra"
)

// Periodic jobs: suspend, resume, run now, and the runs a job launched.

func (a *app) jobSuspendCommand() *cobra.Command {
	return oneCall(a, "suspend JOB_ID", "Stop a periodic job's ticks from launching runs (runs going go on)",
		func(ctx context.Context, c *clients, id string) (*pelotonv1.Job, error) {
			resp, err := c.jobs.SuspendJob(ctx, &pelotonv1.SuspendJobRequest{Id: id})
			return resp.GetJob(), err
		}, a.periodicChange("suspended"))
}

func (a *app) jobResumeCommand() *cobra.Command {
	return oneCall(a, "resume JOB_ID", "Let a suspended periodic job launch runs again from its next tick",
		func(ctx context.Context, c *clients, id string) (*pelotonv1.Job, error) {
			resp, err := c.jobs.ResumeJob(ctx, &pelotonv1.ResumeJobRequest{Id: id})
			return resp.GetJob(), err
		}, a.periodicChange("resumed"))
}

// periodicChange writes a suspended or resumed job as a line.
func (a *app) periodicChange(what string) func(io.Writer, *pelotonv1.Job) error {
	return func(w io.Writer, j *pelotonv1.Job) error {
		line := fmt.Sprintf("job %s: %s", j.GetId(), what)
		if next := j.GetStatus().GetPeriodic().GetNextRunTime(); next != nil {
			line += ", next run " + timestamp(next, a.clock.Now())
		}
		_, err := fmt.Fprintln(w, line)
		return err
	}
}

func (a *app) jobRunCommand() *cobra.Command {
	return oneCall(a, "run JOB_ID", "Launch a run of a periodic job now",
		func(ctx context.Context, c *clients, id string) (*pelotonv1.Job, error) {
			resp, err := c.jobs.RunJob(ctx, &pelotonv1.RunJobRequest{Id: id})
			return resp.GetRun(), err
		}, func(w io.Writer, run *pelotonv1.Job) error {
			_, err := fmt.Fprintf(w, "run %s launched (%s)\n", run.GetId(), run.GetSpec().GetName())
			return err
		})
}

func (a *app) jobRunsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "runs JOB_ID",
		Short: "List the runs a periodic job launched, newest first, with their outcome",
		Long: `runs lists the runs of a periodic job that are kept (its schedule's
keep_runs finished ones, and every run going), newest first: the tick that
launched each (or "by hand"), its state, and when it started and ended.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			req := &pelotonv1.ListJobsRequest{RunOf: argv[0], Order: pelotonv1.JobOrder_JOB_ORDER_NEWEST_FIRST}
			resp := &pelotonv1.ListJobsResponse{}
			for {
				ctx, cancel := a.rpc(cmd.Context())
				page, err := c.jobs.ListJobs(ctx, req)
				cancel()
				if err != nil {
					return err
				}
				resp.Jobs = append(resp.Jobs, page.GetJobs()...)
				if page.GetNextPageToken() == "" {
					break
				}
				req.PageToken = page.GetNextPageToken()
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			now := a.clock.Now()
			t := newTable(cmd.OutOrStdout(), "ID", "TICK", "STATE", "TASKS", "STARTED", "COMPLETED", "MESSAGE")
			for _, j := range resp.GetJobs() {
				tick := "by hand"
				if tt := j.GetStatus().GetRunOf().GetTickTime(); tt != nil {
					tick = tt.AsTime().Local().Format("2006-01-02 15:04")
				}
				st := j.GetStatus()
				t.row(j.GetId(), tick, shortState(st.GetState()), taskCounts(st.GetTaskStates()),
					ago(st.GetStartTime(), now), ago(st.GetCompletionTime(), now), st.GetMessage())
			}
			return t.flush()
		}),
	}
}

// scheduleText renders a schedule: "*/5 * * * * (Europe/Berlin), FORBID,
// deadline 2m0s, keeps 3".
func scheduleText(s *pelotonv1.Schedule) string {
	if s == nil {
		return ""
	}
	parts := []string{s.GetCron() + " (" + firstNonEmpty(s.GetTimeZone(), "UTC") + ")"}
	policy := pelotonv1.ConcurrencyPolicy_CONCURRENCY_POLICY_ALLOW
	if p := s.GetConcurrencyPolicy(); p != pelotonv1.ConcurrencyPolicy_CONCURRENCY_POLICY_UNSPECIFIED {
		policy = p
	}
	parts = append(parts, strings.TrimPrefix(shortState(policy), "CONCURRENCY_POLICY_"))
	if d := s.GetStartingDeadlineSeconds(); d > 0 {
		parts = append(parts, "deadline "+(time.Duration(d)*time.Second).String())
	}
	keep := s.GetKeepRuns()
	if keep == 0 {
		keep = 3
	}
	parts = append(parts, fmt.Sprintf("keeps %d finished runs", keep))
	return strings.Join(parts, ", ")
}

// periodicLines are the lines job get adds for a periodic job or a run.
func periodicLines(j *pelotonv1.Job, now time.Time) []string {
	st := j.GetStatus()
	var out []string
	if r := st.GetRunOf(); r != nil {
		tick := "by hand"
		if r.GetTickTime() != nil {
			tick = "tick " + timestamp(r.GetTickTime(), now)
		}
		out = append(out, "Run of", r.GetJobId()+", "+tick)
	}
	p := st.GetPeriodic()
	if j.GetSpec().GetSchedule() == nil {
		return out
	}
	next := timestamp(p.GetNextRunTime(), now)
	if p.GetSuspended() {
		next = "none: suspended (peloton job resume " + j.GetId() + ")"
	}
	out = append(out,
		"Schedule", scheduleText(j.GetSpec().GetSchedule()),
		"Next run", next,
		"Runs", fmt.Sprintf("%d launched, %d going, %d skipped, %d missed (peloton job runs %s)",
			p.GetLaunched(), p.GetActiveRuns(), p.GetSkipped(), p.GetMissed(), j.GetId()),
		"Last run", p.GetLastRunId(),
	)
	return out
}

// nextRunText is a periodic job's next run for a listing.
func nextRunText(j *pelotonv1.Job, now time.Time) string {
	p := j.GetStatus().GetPeriodic()
	switch {
	case j.GetSpec().GetSchedule() == nil:
		return "-"
	case p.GetSuspended():
		return "suspended"
	}
	return ago(p.GetNextRunTime(), now)
}
