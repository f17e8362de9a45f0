package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func (a *app) migrateCommand() *cobra.Command {
	migrate := &cobra.Command{Use: "migrate", Short: "Move jobs from one cluster to another, a batch at a time under their SLA"}
	now := func() time.Time { return a.clock.Now() }
	write := func(w io.Writer, m *pelotonv1.Migration) error { return writeMigration(w, m, now()) }
	var region string
	steer := func(use, short string, call func(context.Context, *clients, string) (*pelotonv1.Migration, error)) *cobra.Command {
		cmd := oneCall(a, use, short, call, write)
		cmd.Flags().StringVar(&region, "region", "", "region of the migration (default: the one the gateway serves)")
		return cmd
	}
	migrate.AddCommand(
		a.migrateStartCommand(),
		steer("get MIGRATION_ID", "Show a migration and its report", func(ctx context.Context, c *clients, id string) (*pelotonv1.Migration, error) {
			resp, err := c.jobs.GetMigration(ctx, &pelotonv1.GetMigrationRequest{MigrationId: id, Region: region})
			return resp.GetMigration(), err
		}),
		steer("pause MIGRATION_ID", "Stop a migration from moving more instances (those in flight finish)", func(ctx context.Context, c *clients, id string) (*pelotonv1.Migration, error) {
			resp, err := c.jobs.PauseMigration(ctx, &pelotonv1.PauseMigrationRequest{MigrationId: id, Region: region})
			return resp.GetMigration(), err
		}),
		steer("resume MIGRATION_ID", "Let a paused or stopped migration go on", func(ctx context.Context, c *clients, id string) (*pelotonv1.Migration, error) {
			resp, err := c.jobs.ResumeMigration(ctx, &pelotonv1.ResumeMigrationRequest{MigrationId: id, Region: region})
			return resp.GetMigration(), err
		}),
		steer("abort MIGRATION_ID", "Stop a migration where it is; the jobs' cluster policies become what they were", func(ctx context.Context, c *clients, id string) (*pelotonv1.Migration, error) {
			resp, err := c.jobs.AbortMigration(ctx, &pelotonv1.AbortMigrationRequest{MigrationId: id, Region: region})
			return resp.GetMigration(), err
		}),
		a.migrateRollbackCommand(),
		&cobra.Command{
			Use:   "list",
			Short: "List the region's migrations, newest first",
			Args:  args(cobra.NoArgs),
			RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
				ctx, cancel := a.rpc(cmd.Context())
				defer cancel()
				resp, err := c.jobs.ListMigrations(ctx, &pelotonv1.ListMigrationsRequest{})
				if err != nil {
					return err
				}
				if a.output != "table" {
					return writeStructured(cmd.OutOrStdout(), a.output, resp)
				}
				t := newTable(cmd.OutOrStdout(), "ID", "STATE", "WHAT", "TO", "PROGRESS", "CREATED", "MESSAGE")
				for _, m := range resp.GetMigrations() {
					t.row(m.GetId(), migrationStateText(m), migrationWhat(m), m.GetToCluster(),
						fmt.Sprintf("%d/%d", m.GetInstancesMoved(), m.GetInstancesTotal()), ago(m.GetCreateTime(), now()), m.GetMessage())
				}
				return t.flush()
			}),
		},
	)
	return migrate
}

func (a *app) migrateStartCommand() *cobra.Command {
	var job, pool, to, region string
	var batch uint32
	var surge, paused, moveRunning, allowStateful, wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "start (--job JOB_ID | --pool PATH) --to CLUSTER",
		Short: "Move a job's instances, or every job of a pool, to another cluster",
		Long: `Move the instances of a job, or of every job of a pool (and its child
pools), from the clusters they run on to one cluster ("dc1", or with its kind,
"mesos:dc1"), --batch-size instances of a job at a time (default: as many as
its SLA's maxUnavailable), each stop admitted by the job's SLA.

Without --surge an instance is stopped first and restarts on the target. With
--surge a replacement starts on the target first; once it is available the
instance stops and restarts there, and the replacement goes: the job keeps its
instances available and grows by at most the batch meanwhile.

The jobs' cluster policy becomes {prefer: [target], avoid: [where they ran]}:
batch jobs' queued and future tasks go to the target, running ones finish where
they run (or are restarted there with --move-running). Stateful jobs move only
with --allow-stateful (their volumes do not follow); daemon jobs move as their
hosts are drained.

A migration that cannot progress (no host on the target for a moved instance,
an instance failing there) stops and says why; "migrate resume" goes on,
"migrate rollback" moves the moved instances back, "migrate abort" leaves
everything where it is. With --wait the command follows the migration: exit 0
when it SUCCEEDED, 2 when it ended otherwise or stopped, 3 on --timeout.`,
		Args: args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			if (job == "") == (pool == "") {
				return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("name one of --job and --pool")}
			}
			if to == "" {
				return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("--to CLUSTER is required")}
			}
			req := &pelotonv1.StartMigrationRequest{JobId: job, Pool: pool, ToCluster: to, Surge: surge, StartPaused: paused,
				MoveRunning: moveRunning, AllowStateful: allowStateful, Region: region}
			if cmd.Flags().Changed("batch-size") {
				req.BatchSize = &batch
			}
			ctx, cancel := a.rpc(cmd.Context())
			resp, err := c.jobs.StartMigration(ctx, req)
			cancel()
			if err != nil {
				return err
			}
			return a.showMigration(cmd, c, resp.GetMigration(), wait, timeout)
		}),
	}
	cmd.Flags().StringVar(&job, "job", "", "the job to move")
	cmd.Flags().StringVar(&pool, "pool", "", "move every job of this pool and its child pools")
	cmd.Flags().StringVar(&to, "to", "", "target cluster, such as k8s or kubernetes:k8s")
	cmd.Flags().Uint32Var(&batch, "batch-size", 0, "instances of a job moved at once, at least 1 (default: the SLA's maxUnavailable)")
	cmd.Flags().BoolVar(&surge, "surge", false, "start each replacement on the target before its instance stops")
	cmd.Flags().BoolVar(&paused, "start-paused", false, "create the migration paused (migrate resume starts it)")
	cmd.Flags().BoolVar(&moveRunning, "move-running", false, "batch jobs: restart running tasks on the target too")
	cmd.Flags().BoolVar(&allowStateful, "allow-stateful", false, "move stateful jobs too; their volumes do not follow")
	cmd.Flags().StringVar(&region, "region", "", "region of the pool (a job's migration runs in the job's region)")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the migration with a progress bar until it ends")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "with --wait: give up after this long (exit 3); 0 waits forever")
	return cmd
}

func (a *app) migrateRollbackCommand() *cobra.Command {
	var region string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "rollback MIGRATION_ID [--wait]",
		Short: "Move the instances a migration moved back where they came from, the same way",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			resp, err := c.jobs.RollbackMigration(ctx, &pelotonv1.RollbackMigrationRequest{MigrationId: argv[0], Region: region})
			cancel()
			if err != nil {
				return err
			}
			return a.showMigration(cmd, c, resp.GetMigration(), wait, timeout)
		}),
	}
	cmd.Flags().StringVar(&region, "region", "", "region of the migration")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the rollback until it ends; exit 0 when every instance is back")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "with --wait: give up after this long (exit 3)")
	return cmd
}

// showMigration prints a migration, or with wait follows it until it ends.
func (a *app) showMigration(cmd *cobra.Command, c *clients, m *pelotonv1.Migration, wait bool, timeout time.Duration) error {
	if !wait {
		if a.output != "table" {
			return writeStructured(cmd.OutOrStdout(), a.output, m)
		}
		return writeMigration(cmd.OutOrStdout(), m, a.clock.Now())
	}
	return a.follow(cmd, m.GetId(), func(p *progress) (proto.Message, error) {
		return a.waitForMigration(cmd.Context(), c, m, timeout, p)
	})
}

func migrationEnded(m *pelotonv1.Migration) bool {
	switch m.GetState() {
	case pelotonv1.MigrationState_MIGRATION_STATE_SUCCEEDED, pelotonv1.MigrationState_MIGRATION_STATE_ROLLED_BACK,
		pelotonv1.MigrationState_MIGRATION_STATE_ABORTED, pelotonv1.MigrationState_MIGRATION_STATE_FAILED:
		return true
	}
	return migrationStopped(m)
}

// migrationStopped: it could not progress and stopped (paused) by itself.
func migrationStopped(m *pelotonv1.Migration) bool {
	return m.GetPaused() && strings.Contains(m.GetMessage(), "stopped: ")
}

// waitForMigration polls a migration until it ends or stops, the timeout
// elapses (0: never) or ctx ends.
func (a *app) waitForMigration(ctx context.Context, c *clients, m *pelotonv1.Migration, timeout time.Duration, p *progress) (*pelotonv1.Migration, error) {
	var timedOut <-chan time.Time
	if timeout > 0 {
		timedOut = a.clock.After(timeout)
	}
	rollback := m.GetState() == pelotonv1.MigrationState_MIGRATION_STATE_ROLLING_BACK
	failures := 0
	for {
		p.showText(migrationProgressText(m, 24))
		if migrationEnded(m) {
			p.finishText(migrationProgressText(m, 24))
			want := pelotonv1.MigrationState_MIGRATION_STATE_SUCCEEDED
			if rollback {
				want = pelotonv1.MigrationState_MIGRATION_STATE_ROLLED_BACK
			}
			if m.GetState() == want {
				return m, nil
			}
			return m, &exitError{code: ExitJobFailed, msg: fmt.Sprintf("migration %s %s: %s", m.GetId(), migrationStateText(m), m.GetMessage())}
		}
		select {
		case <-ctx.Done():
			p.finishText(migrationProgressText(m, 24))
			return m, ctx.Err()
		case <-timedOut:
			p.finishText(migrationProgressText(m, 24))
			return m, &exitError{code: ExitTimeout, msg: fmt.Sprintf("migration %s is still %s after %s (--timeout)",
				m.GetId(), migrationStateText(m), timeout)}
		case <-a.clock.After(a.pollInterval):
		}
		rctx, cancel := a.rpc(ctx)
		resp, err := c.jobs.GetMigration(rctx, &pelotonv1.GetMigrationRequest{MigrationId: m.GetId(), Region: m.GetRegion()})
		cancel()
		if err != nil {
			if transient(err) && failures < maxPollFailures {
				failures++
				continue
			}
			p.finishText(migrationProgressText(m, 24))
			return m, err
		}
		m, failures = resp.GetMigration(), 0
	}
}

func migrationStateText(m *pelotonv1.Migration) string {
	s := shortState(m.GetState())
	switch {
	case migrationStopped(m):
		s += " (stopped)"
	case m.GetPaused():
		s += " (paused)"
	}
	return s
}

func migrationWhat(m *pelotonv1.Migration) string {
	if m.GetJobId() != "" {
		return "job " + m.GetJobId()
	}
	return "pool " + m.GetPool()
}

// migrationProgressText: "migration ID MIGRATING [####>>......] 12/30".
func migrationProgressText(m *pelotonv1.Migration, width int) string {
	total, moved := m.GetInstancesTotal(), m.GetInstancesMoved()
	if m.GetState() == pelotonv1.MigrationState_MIGRATION_STATE_ROLLING_BACK || m.GetState() == pelotonv1.MigrationState_MIGRATION_STATE_ROLLED_BACK {
		moved = total - min(total, moved) // moved back
	}
	bar := progressBar(width, total, []barSegment{{'#', moved}, {'>', m.GetInstancesInFlight()}})
	text := fmt.Sprintf("migration %s %-12s [%s] %d/%d", m.GetId(), migrationStateText(m), bar, moved, total)
	if n := m.GetInstancesInFlight(); n > 0 {
		text += fmt.Sprintf(", %d in flight", n)
	}
	if msg := m.GetMessage(); msg != "" {
		text += " (" + msg + ")"
	}
	return text
}

func writeMigration(w io.Writer, m *pelotonv1.Migration, now time.Time) error {
	batch := "SLA"
	if m.GetBatchSize() > 0 {
		batch = strconv.FormatUint(uint64(m.GetBatchSize()), 10)
	}
	if err := fields(w,
		"ID", m.GetId(),
		"What", migrationWhat(m),
		"To", m.GetToCluster(),
		"State", migrationStateText(m),
		"Batch size", batch,
		"Surge", yesText(m.GetSurge()),
		"Progress", fmt.Sprintf("%d/%d instances moved, %d in flight", m.GetInstancesMoved(), m.GetInstancesTotal(), m.GetInstancesInFlight()),
		"Duration", m.GetDuration().AsDuration().Round(100*time.Millisecond).String(),
		"Message", m.GetMessage(),
		"Created", timestamp(m.GetCreateTime(), now),
		"Completed", timestamp(m.GetCompletionTime(), now),
	); err != nil {
		return err
	}
	if len(m.GetJobs()) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := newTable(w, "JOB", "TYPE", "FROM", "MOVED", "IN FLIGHT", "MAX UNAVAILABLE", "FAILURES", "RETRIES", "DONE", "MESSAGE")
	for _, j := range m.GetJobs() {
		unavail := "-"
		if j.GetType() != pelotonv1.JobType_JOB_TYPE_BATCH {
			unavail = fmt.Sprintf("%d/%d", j.GetMaxUnavailable(), j.GetSlaMaxUnavailable())
		}
		t.row(j.GetJobId(), strings.ToLower(shortState(j.GetType())), j.GetFromCluster(),
			fmt.Sprintf("%d/%d", j.GetMoved(), j.GetInstances()), strconv.FormatUint(uint64(j.GetInFlight()), 10), unavail,
			strconv.FormatUint(uint64(j.GetFailures()), 10), strconv.FormatUint(uint64(j.GetRetries()), 10), yesText(j.GetDone()), j.GetMessage())
	}
	return t.flush()
}

func (a *app) clusterCommand() *cobra.Command {
	cluster := &cobra.Command{Use: "cluster", Short: "Show the region's clusters and what still runs on each; drain one to retire it"}
	var region string
	one := func(use, short string, call func(context.Context, *clients, string) (*pelotonv1.ClusterSummary, error)) *cobra.Command {
		cmd := oneCall(a, use, short, call, writeCluster)
		cmd.Flags().StringVar(&region, "region", "", "region of the cluster (default: the one the gateway serves)")
		return cmd
	}
	drain := one("drain CLUSTER", "Stop new placements on every host of a cluster; what runs there goes on until moved",
		func(ctx context.Context, c *clients, name string) (*pelotonv1.ClusterSummary, error) {
			resp, err := c.hosts.DrainCluster(ctx, &pelotonv1.DrainClusterRequest{Cluster: name, Region: region})
			return resp.GetCluster(), err
		})
	drain.Long = `Drain a cluster ("dc1" or "mesos:dc1"): nothing new is placed on its hosts,
what runs there goes on. It shows what is left to move, per pool and job;
"peloton migrate start" moves it. The drain is kept across restarts; "peloton
cluster undrain" opens the cluster again.`
	cluster.AddCommand(
		one("get CLUSTER", "Show a cluster and what still runs there, per pool and job",
			func(ctx context.Context, c *clients, name string) (*pelotonv1.ClusterSummary, error) {
				resp, err := c.hosts.GetCluster(ctx, &pelotonv1.GetClusterRequest{Cluster: name, Region: region})
				return resp.GetCluster(), err
			}),
		drain,
		one("undrain CLUSTER", "Let a drained cluster take new placements again",
			func(ctx context.Context, c *clients, name string) (*pelotonv1.ClusterSummary, error) {
				resp, err := c.hosts.UndrainCluster(ctx, &pelotonv1.UndrainClusterRequest{Cluster: name, Region: region})
				return resp.GetCluster(), err
			}),
		&cobra.Command{
			Use:   "list",
			Short: "List the region's clusters: hosts, tasks, whether drained",
			Args:  args(cobra.NoArgs),
			RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
				ctx, cancel := a.rpc(cmd.Context())
				defer cancel()
				resp, err := c.hosts.ListClusters(ctx, &pelotonv1.ListClustersRequest{Region: region})
				if err != nil {
					return err
				}
				if a.output != "table" {
					return writeStructured(cmd.OutOrStdout(), a.output, resp)
				}
				t := newTable(cmd.OutOrStdout(), "NAME", "KIND", "STATE", "HOSTS", "TASKS", "JOBS", "CAPACITY", "ALLOCATED")
				for _, cl := range resp.GetClusters() {
					t.row(cl.GetName(), cl.GetKind(), clusterState(cl), strconv.FormatUint(uint64(cl.GetHosts()), 10),
						strconv.FormatUint(uint64(cl.GetTasks()), 10), strconv.Itoa(len(cl.GetJobs())),
						formatResources(cl.GetCapacity()), formatResources(cl.GetAllocated()))
				}
				return t.flush()
			}),
		},
	)
	return cluster
}

func clusterState(c *pelotonv1.ClusterSummary) string {
	if c.GetDrained() {
		return "DRAINED"
	}
	return "OPEN"
}

func writeCluster(w io.Writer, c *pelotonv1.ClusterSummary) error {
	if err := fields(w,
		"Name", c.GetName(),
		"Kind", c.GetKind(),
		"Region", c.GetRegion(),
		"State", clusterState(c),
		"Hosts", strconv.FormatUint(uint64(c.GetHosts()), 10),
		"Capacity", formatResources(c.GetCapacity()),
		"Allocated", formatResources(c.GetAllocated()),
		"Tasks", fmt.Sprintf("%d still run here", c.GetTasks()),
	); err != nil {
		return err
	}
	for _, part := range []struct {
		title string
		us    []*pelotonv1.ClusterUsage
	}{{"POOL", c.GetPools()}, {"JOB", c.GetJobs()}} {
		if len(part.us) == 0 {
			continue
		}
		fmt.Fprintln(w)
		t := newTable(w, part.title, "TASKS", "ALLOCATED")
		for _, u := range part.us {
			t.row(u.GetName(), strconv.FormatUint(uint64(u.GetTasks()), 10), formatResources(u.GetAllocated()))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}
