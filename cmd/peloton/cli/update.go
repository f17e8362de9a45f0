package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"sigs.k8s.io/yaml"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func (a *app) jobUpdateCommand() *cobra.Command {
	var file string
	var batchSize, maxFailures, canary uint32
	var canaryExtra bool
	var wait, rollbackOnFailure, startPaused, inPlace bool
	var minHealthy, autoPromote time.Duration
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "update JOB_ID -f FILE",
		Short: "Roll a job onto a new spec, a batch of instances at a time",
		Long: `Update a job to a new YAML or JSON spec ("-f -" reads stdin): the spec is
stored as the job's next config version and its instances restart on it,
--batch-size at a time (all at once when not given); an instance counts as
done once it runs and is healthy (ready), for --min-healthy when given, and
--in-place restarts it on the host it ran on where it still fits. A spec with
fewer instances removes the highest-numbered ones, under the job's SLA. "peloton job config JOB_ID" prints
the current spec to start from. A running update of the job is aborted.

The spec is checked locally first, as for job create. With --wait the command
follows the update until it ends: exit code 0 when it SUCCEEDED, 2 when it
was ABORTED, FAILED or ROLLED_BACK, 3 when --timeout elapsed first.

Instances that fail on the new config (a run fails, a health check fails)
are counted; past --max-failures the update fails, and with
--rollback-on-failure every instance moves back to the old config, with the
same batch size and SLA. "peloton update pause|resume|rollback|abort" steer
a running update.

--canary N moves the lowest N instances first (under the batch size and the
SLA, in place of their old runs) and then waits, showing the canaries on the
new config and available, until "peloton update promote UPDATE_ID" (or, with
--auto-promote-after, until every canary has been available that long); then
the rest move. A canary failing past --max-failures reverts the update with
--rollback-on-failure: the job's config goes back and the canaries move back;
the other instances never moved. With --canary-extra the canaries are N
extra instances beside the job's (a service's, where its pool has room),
numbered from its instance count up, so that no instance leaves its config
before the promotion; promoted or reverted, the extra instances are removed,
under the SLA.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			spec, err := a.specFlag(cmd, file)
			if err != nil {
				return err
			}
			return a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
				ctx, cancel := a.rpc(cmd.Context())
				req := &pelotonv1.UpdateJobRequest{JobId: argv[0], Spec: spec,
					MaxFailures: maxFailures, RollbackOnFailure: rollbackOnFailure, StartPaused: startPaused,
					MinHealthySeconds: uint32(minHealthy.Round(time.Second) / time.Second), InPlace: inPlace,
					Canary: canary, AutoPromoteAfterSeconds: uint32(autoPromote.Round(time.Second) / time.Second), CanaryExtra: canaryExtra}
				if cmd.Flags().Changed("batch-size") {
					req.BatchSize = &batchSize
				}
				resp, err := c.jobs.UpdateJob(ctx, req)
				cancel()
				if err != nil {
					return rejected(err)
				}
				out := cmd.OutOrStdout()
				if !wait {
					if a.output != "table" {
						return writeStructured(out, a.output, resp.GetUpdate())
					}
					return writeUpdate(out, resp.GetUpdate(), a.clock.Now())
				}
				return a.follow(cmd, resp.GetUpdate().GetId(), func(p *progress) (proto.Message, error) {
					return a.waitForUpdate(cmd.Context(), c, resp.GetUpdate(), timeout, p)
				})
			})(cmd, argv)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "new job spec file, YAML or JSON (\"-\" for stdin)")
	cmd.Flags().Uint32Var(&batchSize, "batch-size", 0, "instances restarted on the new config at once, at least 1 (default: all)")
	cmd.Flags().DurationVar(&minHealthy, "min-healthy", 0, "how long a restarted instance must stay healthy before it counts as done (e.g. 10s)")
	cmd.Flags().BoolVar(&inPlace, "in-place", false, "restart each instance on its own host when it still fits there")
	cmd.Flags().Uint32Var(&maxFailures, "max-failures", 0, "instances that may fail on the new config before the update fails")
	cmd.Flags().BoolVar(&rollbackOnFailure, "rollback-on-failure", false, "roll back by itself when more than --max-failures instances failed")
	cmd.Flags().BoolVar(&startPaused, "start-paused", false, "create the update paused (peloton update resume starts it)")
	cmd.Flags().Uint32Var(&canary, "canary", 0, "move this many instances first, then wait for peloton update promote")
	cmd.Flags().DurationVar(&autoPromote, "auto-promote-after", 0, "with --canary: promote by itself once every canary has been available this long (e.g. 5m)")
	cmd.Flags().BoolVar(&canaryExtra, "canary-extra", false, "with --canary: start the canaries as extra instances beside the job's (a service's), every instance staying on its config until the promotion")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the update until it ends; exit 0 if it succeeded, 2 if it was aborted")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "with --wait: give up after this long (exit 3); 0 waits forever")
	return cmd
}

func updateEnded(s pelotonv1.UpdateState) bool {
	switch s {
	case pelotonv1.UpdateState_UPDATE_STATE_SUCCEEDED, pelotonv1.UpdateState_UPDATE_STATE_ABORTED,
		pelotonv1.UpdateState_UPDATE_STATE_ROLLED_BACK, pelotonv1.UpdateState_UPDATE_STATE_FAILED:
		return true
	}
	return false
}

// waitForUpdate polls an update until it ends, the timeout elapses (0:
// never) or ctx ends. It returns the last update seen and an error carrying
// the exit code: nil for SUCCEEDED, ExitJobFailed for ABORTED, ExitTimeout.
func (a *app) waitForUpdate(ctx context.Context, c *clients, u *pelotonv1.Update, timeout time.Duration, p *progress) (*pelotonv1.Update, error) {
	var timedOut <-chan time.Time
	if timeout > 0 {
		timedOut = a.clock.After(timeout)
	}
	failures := 0
	for {
		p.showText(updateProgressText(u, 24))
		if updateEnded(u.GetState()) {
			p.finishText(updateProgressText(u, 24))
			return u, updateOutcome(u)
		}
		select {
		case <-ctx.Done():
			p.finishText(updateProgressText(u, 24))
			return u, ctx.Err()
		case <-timedOut:
			p.finishText(updateProgressText(u, 24))
			return u, &exitError{code: ExitTimeout, msg: fmt.Sprintf("update %s is still %s after %s (--timeout)",
				u.GetId(), shortState(u.GetState()), timeout)}
		case <-a.clock.After(a.pollInterval):
		}
		rctx, cancel := a.rpc(ctx)
		resp, err := c.jobs.GetUpdate(rctx, &pelotonv1.GetUpdateRequest{UpdateId: u.GetId()})
		cancel()
		if err != nil {
			if transient(err) && failures < maxPollFailures {
				failures++
				continue
			}
			p.finishText(updateProgressText(u, 24))
			return u, err
		}
		u, failures = resp.GetUpdate(), 0
	}
}

// updateOutcome is the error (and so the exit code) for an ended update.
func updateOutcome(u *pelotonv1.Update) error {
	if u.GetState() == pelotonv1.UpdateState_UPDATE_STATE_SUCCEEDED {
		return nil
	}
	msg := fmt.Sprintf("update %s ended %s", u.GetId(), shortState(u.GetState()))
	if u.GetMessage() != "" {
		msg += ": " + u.GetMessage()
	}
	switch u.GetState() {
	case pelotonv1.UpdateState_UPDATE_STATE_ROLLED_BACK:
		msg += fmt.Sprintf(" (every instance back on config %d)", u.GetFromVersion())
	default:
		msg += fmt.Sprintf(" (%d of %d instances moved keep the new config)", u.GetInstancesDone(), u.GetInstancesTotal())
	}
	return &exitError{code: ExitJobFailed, msg: msg}
}

// updateProgressText: "update ID ROLLING_FORWARD [######..........] 4/10".
func updateProgressText(u *pelotonv1.Update, width int) string {
	bar := progressBar(width, u.GetInstancesTotal(), []barSegment{{'#', u.GetInstancesDone()}, {'>', u.GetInstancesInFlight()}})
	text := fmt.Sprintf("update %s %-15s [%s] %d/%d", u.GetId(), shortState(u.GetState()), bar, u.GetInstancesDone(), u.GetInstancesTotal())
	if n := u.GetInstancesInFlight(); n > 0 {
		text += fmt.Sprintf(", %d in flight", n)
	}
	if n := u.GetInstancesFailed(); n > 0 {
		text += fmt.Sprintf(", %d failed", n)
	}
	return text
}

// versions renders the config versions an update moves between: "1 -> 2".
func versions(u *pelotonv1.Update) string {
	return fmt.Sprintf("%d -> %d", u.GetFromVersion(), u.GetToVersion())
}

func batchText(n uint32) string {
	if n == 0 {
		return "all"
	}
	return strconv.FormatUint(uint64(n), 10)
}

func writeUpdate(w io.Writer, u *pelotonv1.Update, now time.Time) error {
	return fields(w,
		"ID", u.GetId(),
		"Job", u.GetJobId(),
		"State", shortState(u.GetState()),
		"Versions", versions(u),
		"Batch size", batchText(u.GetBatchSize()),
		"Progress", fmt.Sprintf("%d/%d instances, %d in flight", u.GetInstancesDone(), u.GetInstancesTotal(), u.GetInstancesInFlight()),
		"Min healthy", (time.Duration(u.GetMinHealthySeconds()) * time.Second).String(),
		"In place", yesText(u.GetInPlace()),
		"Failed", failedText(u),
		"Paused", yesText(u.GetPaused()),
		"Canary", canaryText(u),
		"Message", u.GetMessage(),
		"Created", timestamp(u.GetCreateTime(), now),
		"Completed", timestamp(u.GetCompletionTime(), now),
	)
}

// canaryText says an update's canary phase.
func canaryText(u *pelotonv1.Update) string {
	switch {
	case u.GetCanary() == 0:
		return "none"
	case u.GetCanaryExtra() && !u.GetPromoted() && u.GetCanary() == 1:
		return fmt.Sprintf("1 extra instance (%d) beside the job's, %s", u.GetInstancesTotal()-1, promotionText(u))
	case u.GetCanaryExtra() && !u.GetPromoted():
		return fmt.Sprintf("%d extra instances (%d-%d) beside the job's, %s", u.GetCanary(), u.GetInstancesTotal()-u.GetCanary(), u.GetInstancesTotal()-1, promotionText(u))
	case u.GetPromoted():
		return fmt.Sprintf("%d, promoted by %s", u.GetCanary(), u.GetPromotedBy())
	}
	return fmt.Sprintf("%d, %s", u.GetCanary(), promotionText(u))
}

// promotionText says how a canary update waiting for its promotion gets
// it.
func promotionText(u *pelotonv1.Update) string {
	if u.GetAutoPromoteAfterSeconds() > 0 {
		return fmt.Sprintf("waiting for promotion (by itself once every canary has been available %s)", time.Duration(u.GetAutoPromoteAfterSeconds())*time.Second)
	}
	return fmt.Sprintf("waiting for promotion (peloton update promote %s)", u.GetId())
}

func writeUpdateTable(w io.Writer, updates []*pelotonv1.Update, now time.Time) error {
	t := newTable(w, "ID", "STATE", "VERSIONS", "BATCH", "PROGRESS", "CREATED", "MESSAGE")
	for _, u := range updates {
		t.row(u.GetId(), shortState(u.GetState()), versions(u), batchText(u.GetBatchSize()),
			fmt.Sprintf("%d/%d", u.GetInstancesDone(), u.GetInstancesTotal()), ago(u.GetCreateTime(), now), u.GetMessage())
	}
	return t.flush()
}

func (a *app) updateCommand() *cobra.Command {
	update := &cobra.Command{Use: "update", Short: "Inspect, pause, resume, promote, abort and roll back job updates (start one with job update)"}
	now := func() time.Time { return a.clock.Now() }
	update.AddCommand(
		oneCall(a, "get UPDATE_ID", "Show an update", func(ctx context.Context, c *clients, id string) (*pelotonv1.Update, error) {
			resp, err := c.jobs.GetUpdate(ctx, &pelotonv1.GetUpdateRequest{UpdateId: id})
			return resp.GetUpdate(), err
		}, func(w io.Writer, u *pelotonv1.Update) error { return writeUpdate(w, u, now()) }),
		oneCall(a, "abort UPDATE_ID", "Stop a rolling update; instances already moved keep the new config", func(ctx context.Context, c *clients, id string) (*pelotonv1.Update, error) {
			resp, err := c.jobs.AbortUpdate(ctx, &pelotonv1.AbortUpdateRequest{UpdateId: id})
			return resp.GetUpdate(), err
		}, func(w io.Writer, u *pelotonv1.Update) error { return writeUpdate(w, u, now()) }),
		oneCall(a, "pause UPDATE_ID", "Stop a rolling update from starting new batches (those in flight finish)", func(ctx context.Context, c *clients, id string) (*pelotonv1.Update, error) {
			resp, err := c.jobs.PauseUpdate(ctx, &pelotonv1.PauseUpdateRequest{UpdateId: id})
			return resp.GetUpdate(), err
		}, func(w io.Writer, u *pelotonv1.Update) error { return writeUpdate(w, u, now()) }),
		oneCall(a, "resume UPDATE_ID", "Let a paused update go on", func(ctx context.Context, c *clients, id string) (*pelotonv1.Update, error) {
			resp, err := c.jobs.ResumeUpdate(ctx, &pelotonv1.ResumeUpdateRequest{UpdateId: id})
			return resp.GetUpdate(), err
		}, func(w io.Writer, u *pelotonv1.Update) error { return writeUpdate(w, u, now()) }),
		oneCall(a, "promote UPDATE_ID", "End a canary update's canary phase: the rest of the instances move", func(ctx context.Context, c *clients, id string) (*pelotonv1.Update, error) {
			resp, err := c.jobs.PromoteUpdate(ctx, &pelotonv1.PromoteUpdateRequest{UpdateId: id})
			return resp.GetUpdate(), err
		}, func(w io.Writer, u *pelotonv1.Update) error { return writeUpdate(w, u, now()) }),
		oneCall(a, "rollback UPDATE_ID", "Move an update's instances back to its old config, with the same batch size and SLA", func(ctx context.Context, c *clients, id string) (*pelotonv1.Update, error) {
			resp, err := c.jobs.RollbackUpdate(ctx, &pelotonv1.RollbackUpdateRequest{UpdateId: id})
			return resp.GetUpdate(), err
		}, func(w io.Writer, u *pelotonv1.Update) error { return writeUpdate(w, u, now()) }),
		oneCall(a, "list JOB_ID", "List a job's updates, oldest first", func(ctx context.Context, c *clients, id string) (*pelotonv1.ListUpdatesResponse, error) {
			return c.jobs.ListUpdates(ctx, &pelotonv1.ListUpdatesRequest{JobId: id})
		}, func(w io.Writer, resp *pelotonv1.ListUpdatesResponse) error {
			return writeUpdateTable(w, resp.GetUpdates(), now())
		}))
	return update
}

// oneCall is a command that takes one argument, makes one call with it and
// prints the answer: as JSON or YAML with -o, else with table.
func oneCall[M proto.Message](a *app, use, short string, call func(context.Context, *clients, string) (M, error), table func(io.Writer, M) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			m, err := call(ctx, c, argv[0])
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, m)
			}
			return table(cmd.OutOrStdout(), m)
		}),
	}
}

func (a *app) jobConfigCommand() *cobra.Command {
	var version uint64
	cmd := &cobra.Command{
		Use:   "config JOB_ID",
		Short: "Print a job's spec, as job create and job update read it",
		Long: `Print a stored config version of a job (--version, default the current one)
as a YAML spec that job create and job update accept; -o json prints it as
JSON. Edit it and pass it to "peloton job update JOB_ID -f FILE".`,
		Args: args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.jobs.GetJobConfig(ctx, &pelotonv1.GetJobConfigRequest{JobId: argv[0], Version: version})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if a.output == "table" {
				var stored []string
				for _, v := range resp.GetVersions() {
					stored = append(stored, strconv.FormatUint(v, 10))
				}
				fmt.Fprintf(out, "# job %s, config version %d (stored versions: %s)\n", argv[0], resp.GetVersion(), strings.Join(stored, ", "))
			}
			data, err := specText(resp.GetSpec(), a.output == "json")
			if err != nil {
				return err
			}
			_, err = out.Write(data)
			return err
		}),
	}
	cmd.Flags().Uint64Var(&version, "version", 0, "config version to print (0: the current one)")
	return cmd
}

// specText renders a spec with only the fields set, as YAML (or JSON), in
// the shape DecodeJobSpec reads back.
func specText(spec *pelotonv1.JobSpec, asJSON bool) ([]byte, error) {
	raw, err := protojson.Marshal(spec)
	if err != nil {
		return nil, err
	}
	out, err := indentJSON(shortEnums(raw, spec.ProtoReflect().Descriptor()))
	if err != nil || asJSON {
		return out, err
	}
	return yaml.JSONToYAML(out)
}

func (a *app) jobEventsCommand() *cobra.Command {
	var instance uint32
	var after uint64
	var limit uint32
	cmd := &cobra.Command{
		Use:   "events JOB_ID",
		Short: "Show a job's history: the stored job and task events",
		Long: `Show the events the job's region keeps of it (for its retention window,
also across restarts), oldest first: job state changes ("job") and task state
changes (by instance). --after SEQ pages on from an event; when more events
follow, the command says how to ask for them.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			req := &pelotonv1.ListEventsRequest{JobId: argv[0], AfterSeq: after, Limit: limit}
			if cmd.Flags().Changed("instance") {
				req.Instance = &instance
			}
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.jobs.ListEvents(ctx, req)
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			if err := writeEventTable(cmd.OutOrStdout(), resp.GetEvents()); err != nil {
				return err
			}
			if evs := resp.GetEvents(); resp.GetMore() && len(evs) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "more events follow: peloton job events %s --after %d\n", argv[0], evs[len(evs)-1].GetSeq())
			}
			return nil
		}),
	}
	cmd.Flags().Uint32Var(&instance, "instance", 0, "only this instance's task events")
	cmd.Flags().Uint64Var(&after, "after", 0, "only events after this sequence number")
	cmd.Flags().Uint32Var(&limit, "limit", 0, "most events to show (0: the server's default, 1000)")
	return cmd
}

func writeEventTable(w io.Writer, events []*pelotonv1.Event) error {
	t := newTable(w, "SEQ", "TIME", "INSTANCE", "STATE", "DETAIL")
	for _, ev := range events {
		when := ""
		if ev.GetTime() != nil {
			when = ev.GetTime().AsTime().Local().Format("2006-01-02 15:04:05.000")
		}
		seq := strconv.FormatUint(ev.GetSeq(), 10)
		if st := ev.GetJob(); st != nil {
			t.row(seq, when, "job", shortState(st.GetState()), st.GetMessage())
			continue
		}
		task := ev.GetTask()
		var detail []string
		for _, s := range []string{task.GetReason(), task.GetMessage()} {
			if s != "" {
				detail = append(detail, s)
			}
		}
		t.row(seq, when, strconv.FormatUint(uint64(task.GetInstance()), 10), shortState(task.GetState()), strings.Join(detail, ": "))
	}
	return t.flush()
}

func failedText(u *pelotonv1.Update) string {
	if u.GetInstancesFailed() == 0 && u.GetMaxFailures() == 0 && !u.GetRollbackOnFailure() {
		return ""
	}
	out := fmt.Sprintf("%d (at most %d", u.GetInstancesFailed(), u.GetMaxFailures())
	if u.GetRollbackOnFailure() {
		out += ", then roll back"
	}
	return out + ")"
}

func yesText(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

// enumValue is `"field": "ENUM_VALUE"` in protojson's output.
var enumValue = regexp.MustCompile(`"(\w+)": ?"([A-Z][A-Z0-9_]*)"`)

// shortEnums spells enum values of md (and the messages it holds) by the
// short names spec files use: JOB_TYPE_SERVICE becomes service,
// CONSTRAINT_OP_NOT_IN not-in, as DecodeJobSpec reads them back.
func shortEnums(raw []byte, md protoreflect.MessageDescriptor) []byte {
	short := map[string]map[string]string{} // JSON field name -> full -> short
	seen := map[protoreflect.FullName]bool{}
	var walk func(protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			f := fields.Get(i)
			switch {
			case f.Enum() != nil:
				values := f.Enum().Values()
				prefix := strings.TrimSuffix(string(values.ByNumber(0).Name()), "UNSPECIFIED")
				m := short[f.JSONName()]
				if m == nil {
					m = map[string]string{}
					short[f.JSONName()] = m
				}
				for j := 0; j < values.Len(); j++ {
					full := string(values.Get(j).Name())
					if s := strings.TrimPrefix(full, prefix); s != full && values.Get(j).Number() != 0 {
						m[full] = strings.ReplaceAll(strings.ToLower(s), "_", "-")
					}
				}
			case f.Message() != nil:
				walk(f.Message())
			}
		}
	}
	walk(md)
	return enumValue.ReplaceAllFunc(raw, func(b []byte) []byte {
		m := enumValue.FindSubmatch(b)
		if s, ok := short[string(m[1])][string(m[2])]; ok {
			return []byte(`"` + string(m[1]) + `":"` + s + `"`)
		}
		return b
	})
}
