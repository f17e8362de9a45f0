package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func (a *app) jobCommand() *cobra.Command {
	job := &cobra.Command{Use: "job", Short: "Create, update, inspect, stop and delete jobs"}
	job.AddCommand(a.jobCreateCommand(), a.jobGetCommand(), a.jobListCommand(), a.jobStopCommand(), a.jobDeleteCommand(),
		a.jobUpdateCommand(), a.jobConfigCommand(), a.jobEventsCommand(),
		a.jobSuspendCommand(), a.jobResumeCommand(), a.jobRunCommand(), a.jobRunsCommand())
	return job
}

func (a *app) jobCreateCommand() *cobra.Command {
	var file string
	var wait bool
	var timeout time.Duration
	var batchSize int
	cmd := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create a job from a YAML or JSON spec, or many jobs from a multi-document YAML",
		Long: `Create a job from a YAML or JSON spec ("-f -" reads stdin).

The spec is checked locally first: every problem is listed with its field
path and nothing is sent (exit code 1). With --wait the command follows the
job until it ends: exit code 0 when it SUCCEEDED, 2 when it FAILED or was
KILLED, 3 when --timeout elapsed first.

A YAML file of several documents (separated by "---" lines) creates a job
per document, --batch-size specs per request (CreateJobs). Every document
is checked locally first (problems are named jobs[i], the i-th document from
0). The server accepts or refuses each spec on its own: one line per
document says the job's id, or why it was refused, and the exit code is
non-zero when any was refused. -o json prints the results. Each request
carries a random request id, so a request sent again after the server was
unavailable creates nothing twice.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			specs, err := a.specsFlag(cmd, file)
			if err != nil {
				return err
			}
			if len(specs) > 1 {
				if wait {
					return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("--wait follows one job; %s holds %d", file, len(specs))}
				}
				if batchSize < 1 || batchSize > pelotonv1.MaxJobsPerRequest {
					return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("--batch-size must be between 1 and %d", pelotonv1.MaxJobsPerRequest)}
				}
				return a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
					results, err := a.createJobs(cmd.Context(), c, specs, batchSize)
					if err != nil {
						return rejected(err)
					}
					return a.printResults(cmd, specs, results)
				})(cmd, argv)
			}
			spec := specs[0]
			return a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
				ctx, cancel := a.rpc(cmd.Context())
				resp, err := c.jobs.CreateJob(ctx, &pelotonv1.CreateJobRequest{Spec: spec})
				cancel()
				if err != nil {
					return rejected(err)
				}
				out := cmd.OutOrStdout()
				if !wait {
					if a.output != "table" {
						return writeStructured(out, a.output, resp.GetJob())
					}
					_, err := fmt.Fprintln(out, resp.GetJob().GetId())
					return err
				}
				return a.follow(cmd, resp.GetJob().GetId(), func(p *progress) (proto.Message, error) {
					return a.waitForJob(cmd.Context(), c, resp.GetJob(), timeout, p)
				})
			})(cmd, argv)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "job spec file, YAML or JSON (\"-\" for stdin); several YAML documents create several jobs")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the job until it ends; exit 0 if it succeeded, 2 if it failed or was killed")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "with --wait: give up after this long (exit 3); 0 waits forever")
	cmd.Flags().IntVar(&batchSize, "batch-size", defaultBatchSize, "with several documents: job specs per request (at most the server's limits.jobsPerRequest)")
	return cmd
}

// specsFlag checks -o and reads and checks the job specs of -f (one or
// several documents), before anything is sent.
func (a *app) specsFlag(cmd *cobra.Command, file string) ([]*pelotonv1.JobSpec, error) {
	if err := a.checkOutput(); err != nil {
		return nil, err
	}
	if file == "" {
		return nil, &usageError{command: cmd.CommandPath(), err: errors.New("-f FILE is required (a YAML or JSON job spec, or - for stdin)")}
	}
	specs, err := LoadJobSpecs(file, cmd.InOrStdin())
	if err != nil {
		return nil, specProblems(file, err)
	}
	return specs, nil
}

// specFlag checks -o and reads and checks the job spec of -f, before
// anything is sent.
func (a *app) specFlag(cmd *cobra.Command, file string) (*pelotonv1.JobSpec, error) {
	if err := a.checkOutput(); err != nil {
		return nil, err
	}
	if file == "" {
		return nil, &usageError{command: cmd.CommandPath(), err: errors.New("-f FILE is required (a YAML or JSON job spec, or - for stdin)")}
	}
	spec, err := LoadJobSpec(file, cmd.InOrStdin())
	if err != nil {
		return nil, specProblems(file, err)
	}
	return spec, nil
}

// follow runs a --wait: with table output the id comes first and progress
// follows on stdout; with -o json or yaml progress goes to stderr and the
// last state seen to stdout, which stays parseable.
func (a *app) follow(cmd *cobra.Command, id string, wait func(*progress) (proto.Message, error)) error {
	out := cmd.OutOrStdout()
	progressTo := out
	if a.output != "table" {
		progressTo = cmd.ErrOrStderr()
	} else {
		fmt.Fprintln(out, id)
	}
	last, err := wait(a.newProgress(progressTo))
	if a.output != "table" && last != nil && last.ProtoReflect().IsValid() {
		if werr := writeStructured(out, a.output, last); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// rejected shows a multi-line InvalidArgument (the server's list of spec
// problems) the way local validation shows it.
func rejected(err error) error {
	st, ok := grpcStatus(err)
	if !ok || st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "\n") {
		return err
	}
	lines := strings.Split(strings.TrimRight(st.Message(), "\n"), "\n")
	return &exitError{code: ExitError, msg: fmt.Sprintf("the server rejected the job spec (%d problem%s):\n  %s",
		len(lines), plural(len(lines)), strings.Join(lines, "\n  "))}
}

func (a *app) jobGetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get JOB_ID",
		Short: "Show a job",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.jobs.GetJob(ctx, &pelotonv1.GetJobRequest{Id: argv[0]})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp.GetJob())
			}
			var update *pelotonv1.Update
			if id := resp.GetJob().GetStatus().GetUpdateId(); id != "" {
				// Best effort: without it, the update's id is shown alone.
				if u, err := c.jobs.GetUpdate(ctx, &pelotonv1.GetUpdateRequest{UpdateId: id}); err == nil {
					update = u.GetUpdate()
				}
			}
			return writeJob(cmd.OutOrStdout(), resp.GetJob(), update, a.clock.Now())
		}),
	}
}

// writeJob shows one job as aligned "Key: value" lines, with its latest
// update when known.
func writeJob(w io.Writer, j *pelotonv1.Job, update *pelotonv1.Update, now time.Time) error {
	s, st, t := j.GetSpec(), j.GetStatus(), j.GetSpec().GetTask()
	var constraints []string
	for _, c := range t.GetConstraints() {
		constraints = append(constraints, constraintText(c))
	}
	constraintLine := ""
	for i, c := range constraints {
		if i > 0 {
			constraintLine += " && "
		}
		if len(constraints) > 1 {
			c = "(" + c + ")"
		}
		constraintLine += c
	}
	updateLine := st.GetUpdateId()
	if update != nil {
		updateLine = fmt.Sprintf("%s %s %d/%d", update.GetId(), shortState(update.GetState()), update.GetInstancesDone(), update.GetInstancesTotal())
	}
	overrides := ""
	if n := len(s.GetOverrides()); n > 0 {
		overrides = fmt.Sprintf("%d (peloton job config %s)", n, j.GetId())
	}
	maxRunning := "unlimited"
	if s.GetMaxRunning() > 0 {
		maxRunning = strconv.FormatUint(uint64(s.GetMaxRunning()), 10)
	}
	attempts := strconv.FormatUint(uint64(s.GetMaxAttempts()), 10)
	if s.GetType() == pelotonv1.JobType_JOB_TYPE_SERVICE && s.GetGangSize() <= 1 {
		attempts = "unlimited (a service runs until stopped)"
	}
	pairs := []string{
		"ID", j.GetId(),
		"Name", s.GetName(),
		"Type", shortState(s.GetType()),
		"State", shortState(st.GetState()),
		"Message", st.GetMessage(),
	}
	pairs = append(pairs, periodicLines(j, now)...)
	return fields(w, append(pairs,
		"Moved to", moveText(st.GetMovedTo(), "as job ", now),
		"Moved from", moveText(st.GetMovedFrom(), "from job ", now),
		"Pending", waitingText(st.GetWaiting()),
		"Pool", s.GetPool(),
		"Region", firstNonEmpty(st.GetRegion(), s.GetRegion()),
		"Priority", strconv.Itoa(int(s.GetPriority())),
		"Preemptible", strconv.FormatBool(s.GetPreemptible()),
		"Instances", strconv.FormatUint(uint64(s.GetInstances()), 10),
		"Max running", maxRunning,
		"Max attempts", attempts,
		"Tasks", taskCounts(st.GetTaskStates()),
		"Config version", configVersionText(j.GetConfigVersion()),
		"Update", updateLine,
		"Command", commandLine(t.GetCommand(), t.GetArgs()),
		"Env", labelsText(t.GetEnv()),
		"Resources", formatResources(t.GetResources()),
		"Constraints", constraintLine,
		"Overrides", overrides,
		"Labels", labelsText(s.GetLabels()),
		"Created", timestamp(st.GetCreateTime(), now),
		"Started", timestamp(st.GetStartTime(), now),
		"Completed", timestamp(st.GetCompletionTime(), now),
	)...)
}

// moveText renders one end of a job's move to another region: "region
// west as job 1234 (2026-01-02 15:04:05 (3m ago))".
func moveText(m *pelotonv1.JobMove, jobWord string, now time.Time) string {
	if m.GetRegion() == "" {
		return ""
	}
	s := "region " + m.GetRegion()
	if m.GetJobId() != "" {
		s += " " + jobWord + m.GetJobId()
	} else {
		s += " (nothing was left to run)"
	}
	if t := timestamp(m.GetTime(), now); t != "" {
		s += ", " + t
	}
	return s
}

// waitingText sums up why tasks wait: "12 pending: 10 waiting for pool
// /a's entitlement (cpu 10/10); 2 not placed: 0/5 hosts: 5 zone==x".
func waitingText(groups []*pelotonv1.WaitingTasks) string {
	if len(groups) == 0 {
		return ""
	}
	var total uint32
	parts := make([]string, len(groups))
	for i, g := range groups {
		total += g.GetTasks()
		parts[i] = fmt.Sprintf("%d %s", g.GetTasks(), g.GetReason())
	}
	return fmt.Sprintf("%d pending: %s", total, strings.Join(parts, "; "))
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func (a *app) jobListCommand() *cobra.Command {
	var states, labels []string
	var pool, owner, name, order, search string
	var limit int
	var full bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs",
		Long: `list shows jobs, oldest first (--order newest: newest first), fetched a
page at a time. Filters combine: --state, --pool, --label key=value (or key),
--owner (the job's owner label), --name (exact) and --search (part of a name
or id, any case). Listings leave each job's task and overrides out; --spec
asks for whole specs (with -o json or yaml).`,
		Args: args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			req := &pelotonv1.ListJobsRequest{Pool: pool, Labels: labels, Owner: owner, Name: name, Search: search}
			if order != "" {
				n, err := pelotonv1.ParseEnumName(pelotonv1.JobOrder(0).Descriptor(), order+"_first")
				if err != nil || n == 0 {
					return &exitError{code: ExitError, msg: fmt.Sprintf("--order: %q is not oldest or newest", order)}
				}
				req.Order = pelotonv1.JobOrder(n)
			}
			if full {
				req.View = pelotonv1.JobView_JOB_VIEW_FULL
			}
			for _, s := range states {
				n, err := pelotonv1.ParseEnumName(pelotonv1.JobState(0).Descriptor(), s)
				if err != nil {
					return &exitError{code: ExitError, msg: "--state: " + err.Error()}
				}
				req.States = append(req.States, pelotonv1.JobState(n))
			}
			if _, err := pelotonv1.LabelFilter(labels); err != nil {
				return &exitError{code: ExitError, msg: "--label: " + err.Error()}
			}
			if limit < 0 {
				return &exitError{code: ExitError, msg: "--limit: must be >= 0"}
			}
			resp := &pelotonv1.ListJobsResponse{}
			for {
				if limit > 0 {
					req.Limit = uint32(min(limit-len(resp.Jobs), pelotonv1.MaxJobPageSize))
				}
				ctx, cancel := a.rpc(cmd.Context())
				page, err := c.jobs.ListJobs(ctx, req)
				cancel()
				if err != nil {
					return err
				}
				resp.Jobs = append(resp.Jobs, page.GetJobs()...)
				if page.GetNextPageToken() == "" || (limit > 0 && len(resp.Jobs) >= limit) {
					break
				}
				req.PageToken = page.GetNextPageToken()
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			return writeJobTable(cmd.OutOrStdout(), resp.GetJobs(), a.clock.Now())
		}),
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only jobs in these states (running, succeeded, ...); repeat or separate with commas")
	cmd.Flags().StringVar(&pool, "pool", "", "only jobs in this pool")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only jobs with this label, key=value or key; repeat for several")
	cmd.Flags().StringVar(&owner, "owner", "", "only jobs whose owner label is this")
	cmd.Flags().StringVar(&name, "name", "", "only jobs of this exact name")
	cmd.Flags().StringVar(&search, "search", "", "only jobs whose name or id holds this text (any case)")
	cmd.Flags().StringVar(&order, "order", "", "oldest (the default) or newest first")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many jobs (0: all)")
	cmd.Flags().BoolVar(&full, "spec", false, "fetch whole specs (task and overrides), for -o json or yaml")
	return cmd
}

// writeJobTable lists jobs, with a NEXT RUN column when one of them is
// periodic.
func writeJobTable(w io.Writer, jobs []*pelotonv1.Job, now time.Time) error {
	periodic := false
	for _, j := range jobs {
		periodic = periodic || j.GetSpec().GetSchedule() != nil
	}
	head := []string{"ID", "NAME", "STATE", "POOL", "INSTANCES", "TASKS", "CREATED"}
	if periodic {
		head = append(head, "NEXT RUN")
	}
	t := newTable(w, head...)
	for _, j := range jobs {
		row := []string{j.GetId(), j.GetSpec().GetName(), shortState(j.GetStatus().GetState()), j.GetSpec().GetPool(),
			strconv.FormatUint(uint64(j.GetSpec().GetInstances()), 10), taskCounts(j.GetStatus().GetTaskStates()),
			ago(j.GetStatus().GetCreateTime(), now)}
		if periodic {
			row = append(row, nextRunText(j, now))
		}
		t.row(row...)
	}
	return t.flush()
}

func (a *app) jobStopCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stop JOB_ID",
		Short: "Stop a job: kill its tasks",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.jobs.StopJob(ctx, &pelotonv1.StopJobRequest{Id: argv[0]})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp.GetJob())
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "job %s: %s\n", argv[0], shortState(resp.GetJob().GetStatus().GetState()))
			return err
		}),
	}
}

func (a *app) jobDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete JOB_ID",
		Short: "Delete a job that has ended",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.jobs.DeleteJob(ctx, &pelotonv1.DeleteJobRequest{Id: argv[0]})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted job %s\n", argv[0])
			return err
		}),
	}
}
