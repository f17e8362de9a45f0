package cli

import (
	"context"
	"fmt"
	"google.golang.org/protobuf/types/known/durationpb"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

func (a *app) poolCommand() *cobra.Command {
	pool := &cobra.Command{Use: "pool", Short: "Manage resource pools and show their entitlement"}
	write := func(use, short string, call func(context.Context, *clients, *pelotonv1.PoolSpec) (*pelotonv1.Pool, error)) *cobra.Command {
		var file string
		cmd := &cobra.Command{
			Use:   use + " -f FILE",
			Short: short,
			Long: short + ` from a YAML or JSON pool spec ("-f -" reads stdin):

  path: /maps/ingest
  reservation: {cpu: 10, memMb: 20480}   # guaranteed when there is demand
  limit: {cpu: 40}                       # absent amounts are unlimited
  share: {cpu: 2}                        # absent amounts are 1
  hostPools: [batch, shared]             # host pools its tasks may use; absent: any`,
			Args: args(cobra.NoArgs),
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := a.checkOutput(); err != nil {
					return err
				}
				if file == "" {
					return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("-f FILE is required (a YAML or JSON pool spec, or - for stdin)")}
				}
				spec, err := LoadPoolSpec(file, cmd.InOrStdin())
				if err != nil {
					return specProblemsOf("pool", file, err)
				}
				return a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
					ctx, cancel := a.rpc(cmd.Context())
					defer cancel()
					p, err := call(ctx, c, spec)
					if err != nil {
						return err
					}
					if a.output != "table" {
						return writeStructured(cmd.OutOrStdout(), a.output, p)
					}
					return writePool(cmd.OutOrStdout(), p)
				})(cmd, nil)
			},
		}
		cmd.Flags().StringVarP(&file, "file", "f", "", "pool spec file (YAML or JSON), - for stdin")
		return cmd
	}
	pool.AddCommand(
		write("create", "Create a resource pool", func(ctx context.Context, c *clients, s *pelotonv1.PoolSpec) (*pelotonv1.Pool, error) {
			resp, err := c.pools.CreatePool(ctx, &pelotonv1.CreatePoolRequest{Spec: s})
			return resp.GetPool(), err
		}),
		write("update", "Replace a resource pool's reservation, limit and share", func(ctx context.Context, c *clients, s *pelotonv1.PoolSpec) (*pelotonv1.Pool, error) {
			resp, err := c.pools.UpdatePool(ctx, &pelotonv1.UpdatePoolRequest{Spec: s})
			return resp.GetPool(), err
		}),
		&cobra.Command{
			Use:   "delete PATH",
			Short: "Delete a resource pool that has no children and no unfinished jobs",
			Args:  args(cobra.ExactArgs(1)),
			RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
				ctx, cancel := a.rpc(cmd.Context())
				defer cancel()
				if _, err := c.pools.DeletePool(ctx, &pelotonv1.DeletePoolRequest{Path: argv[0]}); err != nil {
					return err
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "pool %s deleted\n", argv[0])
				return err
			}),
		})
	pool.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List resource pools as a tree",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.pools.ListPools(ctx, &pelotonv1.ListPoolsRequest{})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			return writePoolTree(cmd.OutOrStdout(), resp.GetPools())
		}),
	})
	var byRegion bool
	get := &cobra.Command{
		Use:   "get PATH",
		Short: "Show one resource pool",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.pools.GetPool(ctx, &pelotonv1.GetPoolRequest{Path: argv[0], Regions: byRegion})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp.GetPool())
			}
			if err := writePool(cmd.OutOrStdout(), resp.GetPool()); err != nil {
				return err
			}
			if !byRegion {
				return nil
			}
			fmt.Fprintln(cmd.OutOrStdout())
			t := newTable(cmd.OutOrStdout(), "REGION", "RESERVATION", "LIMIT", "DEMAND")
			for _, r := range resp.GetPool().GetRegions() {
				t.row(r.GetRegion(), formatResources(r.GetReservation()), formatResources(r.GetLimit()), formatResources(r.GetDemand()))
			}
			return t.flush()
		}),
	}
	get.Flags().BoolVar(&byRegion, "regions", false, "also show the pool's split among the federation's regions")
	pool.AddCommand(get)
	return pool
}

// poolAmounts renders one figure of every resource of a pool: "cpu=2 mem=1GiB".
func poolAmounts(p *pelotonv1.Pool, figure func(*pelotonv1.PoolResource) float64) string {
	parts := make([]string, 0, len(p.GetResources()))
	for _, r := range p.GetResources() {
		parts = append(parts, r.GetName()+"="+formatPoolResource(r.GetName(), figure(r)))
	}
	return strings.Join(parts, " ")
}

func writePoolTree(w io.Writer, pools []*pelotonv1.Pool) error {
	t := newTable(w, "POOL", "JOBS", "RESERVATION", "ALLOCATION", "ENTITLEMENT")
	for _, row := range poolTree(pools) {
		p := row.pool
		t.row(strings.Repeat("  ", row.depth)+poolName(p.GetPath()), strconv.FormatUint(uint64(p.GetJobs()), 10),
			poolAmounts(p, (*pelotonv1.PoolResource).GetReservation),
			poolAmounts(p, (*pelotonv1.PoolResource).GetAllocation),
			poolAmounts(p, (*pelotonv1.PoolResource).GetEntitlement))
	}
	return t.flush()
}

func writePool(w io.Writer, p *pelotonv1.Pool) error {
	if err := fields(w,
		"Path", p.GetPath(),
		"Jobs", strconv.FormatUint(uint64(p.GetJobs()), 10),
		"Children", strings.Join(p.GetChildren(), " "),
	); err != nil {
		return err
	}
	if len(p.GetResources()) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := newTable(w, "RESOURCE", "RESERVATION", "LIMIT", "SHARE", "DEMAND", "ALLOCATION", "ENTITLEMENT")
	for _, r := range p.GetResources() {
		f := func(v float64) string { return formatPoolResource(r.GetName(), v) }
		t.row(r.GetName(), f(r.GetReservation()), f(r.GetLimit()), weight(r.GetShare()), f(r.GetDemand()),
			f(r.GetAllocation()), f(r.GetEntitlement()))
	}
	return t.flush()
}

func (a *app) hostCommand() *cobra.Command {
	var cluster string
	list := &cobra.Command{
		Use:   "list",
		Short: "List hosts, with drains and when each was last seen",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.hosts.ListHosts(ctx, &pelotonv1.ListHostsRequest{Cluster: cluster})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			return writeHostTable(cmd.OutOrStdout(), resp.GetHosts(), a.clock.Now())
		}),
	}
	list.Flags().StringVar(&cluster, "cluster", "", "only hosts of this host manager cluster")
	host := &cobra.Command{Use: "host", Short: "Show the hosts tasks run on; drain them for maintenance"}
	var reason, region string
	var deadline time.Duration
	drain := oneCall(a, "drain HOST_ID [--reason R] [--deadline D]", "Take a host out of service for maintenance: nothing new lands there, what runs there moves off",
		func(ctx context.Context, c *clients, id string) (*pelotonv1.Host, error) {
			req := &pelotonv1.DrainHostRequest{HostId: id, Reason: reason, Region: region}
			if deadline > 0 {
				req.Deadline = durationpb.New(deadline)
			}
			resp, err := c.hosts.DrainHost(ctx, req)
			return resp.GetHost(), err
		}, a.writeHost)
	drain.Long = `Drain a host (its ID as host list shows it, such as sim/host-0001): the
scheduler places nothing new on it, and moves off what runs there: service
instances are restarted elsewhere one after another, as their job's SLA
(maxUnavailable) allows; batch tasks finish, or are killed and run elsewhere
once --deadline passed; revocable tasks are killed at once. The host shows
DRAINING, then DRAINED once nothing runs there; "peloton host down" then takes
it down for maintenance, "peloton host up" returns it. The drain is kept
across restarts. --region is needed only when several regions have a host of
that ID.`
	drain.Flags().StringVar(&reason, "reason", "", "why, for other operators")
	drain.Flags().DurationVar(&deadline, "deadline", 0, "kill batch tasks still there after this long (e.g. 10m); default: let them finish")
	drain.Flags().StringVar(&region, "region", "", "region of the host, when several have one of this ID")
	upCommand := func(use, short string) *cobra.Command {
		var upRegion string
		up := oneCall(a, use, short,
			func(ctx context.Context, c *clients, id string) (*pelotonv1.Host, error) {
				resp, err := c.hosts.UndrainHost(ctx, &pelotonv1.UndrainHostRequest{HostId: id, Region: upRegion})
				return resp.GetHost(), err
			}, a.writeHost)
		up.Flags().StringVar(&upRegion, "region", "", "region of the host, when several have one of this ID")
		return up
	}
	undrain := upCommand("undrain HOST_ID", "Put a draining or drained host back into service (the same as host up)")
	up := upCommand("up HOST_ID", "Put a host back into service after maintenance: it takes new work again")
	var downRegion string
	var force bool
	down := oneCall(a, "down HOST_ID [--force]", "Take a DRAINED host down for maintenance",
		func(ctx context.Context, c *clients, id string) (*pelotonv1.Host, error) {
			resp, err := c.hosts.MarkHostDown(ctx, &pelotonv1.MarkHostDownRequest{HostId: id, Region: downRegion, Force: force})
			return resp.GetHost(), err
		}, a.writeHost)
	down.Long = `Mark a host DOWN for maintenance. It must be DRAINED (drained, with
nothing running there); --force takes it down anyway and kills what still runs
there, to run elsewhere. "peloton host up" returns it to service.`
	down.Flags().BoolVar(&force, "force", false, "take it down even though tasks still run there (they are killed)")
	down.Flags().StringVar(&downRegion, "region", "", "region of the host, when several have one of this ID")
	host.AddCommand(list, drain, undrain, up, down, a.hostPoolCommand())
	return host
}

func writeHostTable(w io.Writer, hosts []*pelotonv1.Host, now time.Time) error {
	// New columns go before ID, which stays last: scripts read the first
	// four by position.
	t := newTable(w, "HOSTNAME", "CLUSTER", "KIND", "STATE", "TASKS", "CAPACITY", "ALLOCATED", "REGION", "LAST SEEN", "DRAIN REASON", "HOST POOL", "ID")
	for _, h := range hosts {
		t.row(h.GetHostname(), h.GetCluster(), h.GetKind(), shortState(h.GetState()),
			strconv.FormatUint(uint64(h.GetTasks()), 10), formatResources(h.GetCapacity()),
			formatResources(h.GetAllocated()), h.GetRegion(), ago(h.GetLastSeen(), now), h.GetDrainReason(), hostPoolCell(h), h.GetId())
	}
	return t.flush()
}

// writeHost shows one host, as after a drain or undrain.
func (a *app) writeHost(w io.Writer, h *pelotonv1.Host) error {
	now := a.clock.Now()
	drained := ""
	if h.GetDraining() {
		drained = timestamp(h.GetDrainTime(), now)
		if drained == "" {
			drained = "yes"
		}
	}
	return fields(w,
		"ID", h.GetId(),
		"Hostname", h.GetHostname(),
		"Region", h.GetRegion(),
		"State", shortState(h.GetState()),
		"Drained", drained,
		"Drain reason", h.GetDrainReason(),
		"Tasks", strconv.FormatUint(uint64(h.GetTasks()), 10),
		"Host pool", hostPoolCell(h),
		"Last seen", timestamp(h.GetLastSeen(), now),
	)
}

// hostPoolCell is a host's host pool, with the one it moves to.
func hostPoolCell(h *pelotonv1.Host) string {
	if t := h.GetHostPoolTarget(); t != "" {
		return h.GetHostPool() + "->" + t
	}
	return h.GetHostPool()
}

func (a *app) regionCommand() *cobra.Command {
	region := &cobra.Command{Use: "region", Short: "Show the regions of the federation"}
	region.AddCommand(&cobra.Command{
		Use:   "failback REGION",
		Short: "Move the jobs relocated away from REGION back to it, now that it is alive",
		Args:  args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.fed.FailBack(ctx, &pelotonv1.FailBackRequest{Region: argv[0]})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			t := newTable(cmd.OutOrStdout(), "JOB", "NAME", "BACK IN", "NOTE")
			for _, m := range resp.GetMoved() {
				t.row(m.GetJobId(), m.GetJobName(), m.GetToRegion(), m.GetReason())
			}
			for _, m := range resp.GetNotMoved() {
				t.row(m.GetJobId(), m.GetJobName(), "-", "NOT MOVED: "+m.GetReason())
			}
			return t.flush()
		}),
	})
	region.AddCommand(&cobra.Command{
		Use:   "plan [REGION]",
		Short: "Say, for each region, whether the others could absorb its relocatable work",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			req := &pelotonv1.PlanFailoverRequest{}
			if len(argv) == 1 {
				req.Region = argv[0]
			}
			resp, err := c.fed.PlanFailover(ctx, req)
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			t := newTable(cmd.OutOrStdout(), "IF REGION FAILS", "JOB", "NAME", "GOES TO", "NOTE")
			for _, p := range resp.GetPlans() {
				if len(p.GetMoves())+len(p.GetUnplaced()) == 0 {
					t.row(p.GetRegion(), "-", "-", "-", fmt.Sprintf("nothing to relocate (%d pinned jobs stay)", p.GetPinned()))
				}
				for _, m := range p.GetMoves() {
					t.row(p.GetRegion(), m.GetJobId(), m.GetJobName(), m.GetToRegion(), "fits")
				}
				for _, m := range p.GetUnplaced() {
					t.row(p.GetRegion(), m.GetJobId(), m.GetJobName(), "-", "WOULD NOT FIT: "+m.GetReason())
				}
			}
			return t.flush()
		}),
	})
	region.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List regions with their health and members",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.regions.ListRegions(ctx, &pelotonv1.ListRegionsRequest{})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			return writeRegionTable(cmd.OutOrStdout(), resp.GetRegions(), a.clock.Now())
		}),
	})
	return region
}

// writeRegionTable lists the regions. SUSPECT names the members the
// server suspects: alive in gossip, but its probe of them failed lately.
// PROBES LOST sums the server's recent probes of the region's members:
// direct probes lost of those sent, and those that failed every way. A
// lossy link shows in both before it becomes a failover.
func writeRegionTable(w io.Writer, regions []*pelotonv1.Region, now time.Time) error {
	header := "PROBES LOST"
	for _, r := range regions {
		for _, m := range r.GetMembers() {
			if win := m.GetProbes().GetWindow(); win != nil && header == "PROBES LOST" {
				header += " (" + roughDuration(win.AsDuration()) + ")"
			}
		}
	}
	t := newTable(w, "REGION", "HEALTH", "LEADER", "MEMBERS", "CAPACITY", "ALLOCATION", "LAST SEEN", "SUSPECT", header)
	for _, r := range regions {
		leader := ""
		var suspect []string
		for _, m := range r.GetMembers() {
			if m.GetLeader() {
				leader = firstNonEmpty(m.GetName(), m.GetAddress())
			}
			if m.GetStatus() == "suspect" {
				suspect = append(suspect, firstNonEmpty(m.GetName(), m.GetAddress()))
			}
		}
		t.row(r.GetName(), r.GetHealth(), leader, strconv.Itoa(len(r.GetMembers())),
			formatResources(r.GetCapacity()), formatResources(r.GetAllocation()), ago(r.GetLastSeen(), now),
			firstNonEmpty(strings.Join(suspect, ","), "-"), probeLosses(r.GetMembers()))
	}
	return t.flush()
}

// probeLosses renders the probes of a region's members: "3/41 (7%)", with
// ", 1 failed" when some failed every way; "-" when the server probes none
// of them (its own region of one member, or no gossip).
func probeLosses(members []*pelotonv1.RegionMember) string {
	var sent, lost, failed uint32
	probed := false
	for _, m := range members {
		if p := m.GetProbes(); p != nil {
			probed = true
			sent, lost, failed = sent+p.GetSent(), lost+p.GetLost(), failed+p.GetFailed()
		}
	}
	if !probed {
		return "-"
	}
	out := fmt.Sprintf("%d/%d", lost, sent)
	if sent > 0 {
		out += fmt.Sprintf(" (%d%%)", (100*lost+sent/2)/sent)
	}
	if failed > 0 {
		out += fmt.Sprintf(", %d failed", failed)
	}
	return out
}

type serverVersion struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Region  string `json:"region,omitempty"`
}

// versionReport is what `peloton version -o json|yaml` prints.
type versionReport struct {
	Client      string         `json:"client"`
	Server      *serverVersion `json:"server,omitempty"`
	ServerError string         `json:"serverError,omitempty"`
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the client's version and, when reachable, the server's",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkOutput(); err != nil {
				return err
			}
			report := versionReport{Client: Version}
			c, err := a.dial()
			if err == nil {
				// A version check should not hang on an unreachable address.
				ctx, cancel := context.WithTimeout(cmd.Context(), min(a.rpcTimeout, 3*time.Second))
				var resp *pelotonv1.GetVersionResponse
				resp, err = c.system.GetVersion(ctx, &pelotonv1.GetVersionRequest{})
				cancel()
				c.conn.Close()
				if err == nil {
					report.Server = &serverVersion{resp.GetVersion(), resp.GetCommit(), resp.GetRegion()}
				}
			}
			if err != nil {
				reason := ErrorMessage(err)
				if st, ok := grpcStatus(err); ok && st.Code() == codes.Unavailable {
					reason = unavailableReason(reason)
				}
				report.ServerError = fmt.Sprintf("unreachable at %s (%s)", a.addr, reason)
			}
			out := cmd.OutOrStdout()
			if a.output != "table" {
				return writeValue(out, a.output, report)
			}
			fmt.Fprintf(out, "client: %s\n", report.Client)
			if report.Server == nil {
				_, err := fmt.Fprintf(out, "server: %s\n", report.ServerError)
				return err
			}
			line := "server: " + report.Server.Version
			var extra []string
			if report.Server.Commit != "" {
				extra = append(extra, "commit "+report.Server.Commit)
			}
			if report.Server.Region != "" {
				extra = append(extra, "region "+report.Server.Region)
			}
			if len(extra) > 0 {
				line += " (" + strings.Join(extra, ", ") + ")"
			}
			_, err = fmt.Fprintln(out, line)
			return err
		},
	}
}
