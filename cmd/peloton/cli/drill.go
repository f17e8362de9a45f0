package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func (a *app) drillCommand() *cobra.Command {
	drill := &cobra.Command{Use: "drill", Short: "Run and review region failure drills"}
	var region string
	var duration time.Duration
	var wait bool
	start := &cobra.Command{
		Use:   "region-failure --region R [--duration D] [--wait]",
		Short: "Fence a region, measure detection, relocation and failback, then heal it",
		Long: `region-failure cuts region R off the federation (its shard stops
launching and drops out of gossip, so the others detect a failure), measures
how long detection takes and how long until its relocatable jobs run again
elsewhere, heals it after --duration and measures failback (R back and its
copies of relocated jobs stopped). The report is kept: see "drill list".`,
		Args: args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			if region == "" {
				return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("--region is required")}
			}
			ctx, cancel := a.rpc(cmd.Context())
			resp, err := c.fed.StartDrill(ctx, &pelotonv1.StartDrillRequest{Region: region, DurationSeconds: duration.Seconds()})
			cancel()
			if err != nil {
				return err
			}
			d := resp.GetDrill()
			out := cmd.OutOrStdout()
			if wait {
				fmt.Fprintf(cmd.ErrOrStderr(), "drill %s: region %s isolated for %s; waiting for the report...\n", d.GetId(), region, duration)
				for d.GetState() == "running" || d.GetState() == "healed" {
					if err := a.sleep(cmd.Context(), time.Second); err != nil {
						return err
					}
					ctx, cancel := a.rpc(cmd.Context())
					got, err := c.fed.GetDrill(ctx, &pelotonv1.GetDrillRequest{Id: d.GetId()})
					cancel()
					if err != nil {
						return err
					}
					d = got.GetDrill()
				}
			}
			if a.output != "table" {
				return writeStructured(out, a.output, d)
			}
			if err := writeDrill(out, d); err != nil {
				return err
			}
			if wait && d.GetState() != "completed" {
				return &exitError{code: ExitJobFailed, msg: "drill " + d.GetState() + ": " + d.GetMessage()}
			}
			return nil
		}),
	}
	start.Flags().StringVar(&region, "region", "", "region to fail")
	start.Flags().DurationVar(&duration, "duration", 30*time.Second, "how long the region stays cut off")
	start.Flags().BoolVar(&wait, "wait", false, "wait for the report (exit 2 unless the drill completed)")
	drill.AddCommand(start, &cobra.Command{
		Use:   "list",
		Short: "List drills and their figures",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.fed.ListDrills(ctx, &pelotonv1.ListDrillsRequest{})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			t := newTable(cmd.OutOrStdout(), "ID", "REGION", "STATE", "STARTED", "DETECTION", "RELOCATION", "FAILBACK", "MOVED", "NOT MOVED")
			for _, d := range resp.GetDrills() {
				t.row(d.GetId(), d.GetRegion(), d.GetState(), timestamp(d.GetStartTime(), a.clock.Now()),
					seconds(d.GetDetectionSeconds()), seconds(d.GetRelocationSeconds()), seconds(d.GetFailbackSeconds()),
					fmt.Sprint(len(d.GetMoved())), fmt.Sprint(len(d.GetNotMoved())))
			}
			return t.flush()
		}),
	}, &cobra.Command{
		Use:   "get ID",
		Short: "Show one drill's report",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.fed.GetDrill(ctx, &pelotonv1.GetDrillRequest{Id: argv[0]})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp.GetDrill())
			}
			return writeDrill(cmd.OutOrStdout(), resp.GetDrill())
		}),
	})
	return drill
}

func seconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", s)
}

func writeDrill(w io.Writer, d *pelotonv1.Drill) error {
	if err := fields(w,
		"Drill", d.GetId(),
		"Region", d.GetRegion(),
		"State", d.GetState(),
		"Detection", seconds(d.GetDetectionSeconds())+" (isolated until the others declared it failed)",
		"Relocation", seconds(d.GetRelocationSeconds())+" (isolated until every moved job ran again)",
		"Failback", seconds(d.GetFailbackSeconds())+" (healed until back and its relocated copies stopped)",
		"Message", d.GetMessage(),
	); err != nil {
		return err
	}
	if len(d.GetMoved())+len(d.GetNotMoved()) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := newTable(w, "JOB", "NAME", "MOVED TO", "NOTE")
	for _, m := range d.GetMoved() {
		t.row(m.GetJobId(), m.GetJobName(), m.GetToRegion(), m.GetReason())
	}
	for _, m := range d.GetNotMoved() {
		t.row(m.GetJobId(), m.GetJobName(), "-", m.GetReason())
	}
	return t.flush()
}
