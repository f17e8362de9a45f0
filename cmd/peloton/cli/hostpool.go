package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// hostPoolCommand is `peloton host pool`: set a host's host pool, list the
// host pools with their demand and the latest moves.
func (a *app) hostPoolCommand() *cobra.Command {
	pool := &cobra.Command{
		Use:   "pool",
		Short: "Put hosts in host pools; show host pools, their demand and the moves between them",
		Long: `Hosts are grouped in host pools (such as batch, services and shared); a
resource pool names the host pools its tasks may use (hostPools in its spec).
Hosts no one put in a host pool are in "shared". The host pool policy moves
idle hosts (and, after a drain, busy ones) from host pools without pending
demand to host pools whose tasks wait for hosts, never below a host pool's
floor. See docs/hostpools.md.`,
	}
	var region string
	set := &cobra.Command{
		Use:   "set HOST_ID HOST_POOL",
		Short: "Put a host in a host pool now (calls off a move of the policy under way for it)",
		Args:  args(cobra.ExactArgs(2)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.hosts.SetHostPool(ctx, &pelotonv1.SetHostPoolRequest{HostId: argv[0], HostPool: argv[1], Region: region})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp.GetHost())
			}
			return a.writeHost(cmd.OutOrStdout(), resp.GetHost())
		}),
	}
	set.Flags().StringVar(&region, "region", "", "region of the host, when several have one of this ID")
	list := &cobra.Command{
		Use:   "list",
		Short: "List host pools with their hosts, capacity and pending demand, and the latest moves",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.hosts.ListHostPools(ctx, &pelotonv1.ListHostPoolsRequest{})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			return writeHostPools(cmd.OutOrStdout(), resp, a.clock.Now())
		}),
	}
	pool.AddCommand(set, list)
	return pool
}

// maxListedHosts bounds the host ids a host pool's row shows.
const maxListedHosts = 8

func writeHostPools(w io.Writer, resp *pelotonv1.ListHostPoolsResponse, now time.Time) error {
	t := newTable(w, "HOST POOL", "REGION", "HOSTS", "IN SERVICE", "FLOOR", "CAPACITY", "ALLOCATED", "DEMAND", "MOVING", "HOST IDS")
	for _, p := range resp.GetHostPools() {
		ids := p.GetHosts()
		shown := strings.Join(ids[:min(len(ids), maxListedHosts)], " ")
		if len(ids) > maxListedHosts {
			shown += fmt.Sprintf(" (+%d)", len(ids)-maxListedHosts)
		}
		t.row(p.GetName(), p.GetRegion(), strconv.Itoa(len(ids)), strconv.FormatUint(uint64(p.GetInService()), 10),
			strconv.FormatUint(uint64(p.GetFloor()), 10), formatResources(p.GetCapacity()), formatResources(p.GetAllocated()),
			formatResources(p.GetDemand()), strings.Join(p.GetMoving(), " "), shown)
	}
	if err := t.flush(); err != nil {
		return err
	}
	period := "off"
	for _, p := range resp.GetHostPools() {
		if d := p.GetPolicyPeriod(); d != nil {
			period = "every " + d.AsDuration().String()
		}
	}
	fmt.Fprintf(w, "\nPolicy: %s. Recent moves (newest first):\n", period)
	if len(resp.GetRecentMoves()) == 0 {
		_, err := fmt.Fprintln(w, "  none")
		return err
	}
	m := newTable(w, "WHEN", "HOST", "FROM", "TO", "PHASE", "WAITED", "REASON")
	for _, mv := range resp.GetRecentMoves() {
		waited := ""
		if d := mv.GetWaited(); d != nil {
			waited = d.AsDuration().Round(100 * time.Millisecond).String()
		}
		m.row(ago(mv.GetTime(), now), mv.GetHostId(), mv.GetFrom(), mv.GetTo(),
			strings.TrimPrefix(mv.GetPhase().String(), "HOST_POOL_MOVE_PHASE_"), waited, mv.GetReason())
	}
	return m.flush()
}
