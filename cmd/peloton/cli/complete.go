package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// Shell completion: cobra's `peloton completion bash|zsh|fish` scripts call
// the hidden `peloton __complete ARGS...`, which asks the server for the
// names that fit the argument under the cursor. Which names fit comes from
// the command's usage line (JOB_ID, UPDATE_ID, HOST_ID, PATH of a pool,
// REGION, INSTANCE, HOST_POOL), so a new command completes as soon as its
// usage names its arguments. A server that cannot be reached within
// completeTimeout completes nothing and prints nothing.

// completeTimeout bounds the calls one completion makes: a shell waits.
const completeTimeout = 2 * time.Second

// completer lists the candidates for one argument: "value\tdescription".
type completer func(ctx context.Context, c *clients, args []string, toComplete string) []string

// completers by the placeholder that names an argument in a usage line.
func (a *app) completers() map[string]completer {
	return map[string]completer{
		"JOB_ID":    completeJobs,
		"UPDATE_ID": completeUpdates,
		"HOST_ID":   completeHosts,
		"PATH":      completePools,
		"REGION":    completeRegions,
		"INSTANCE":  completeInstances,
		"HOST_POOL": completeHostPools,
	}
}

// flagCompleters by flag name; a command's local flag of that name
// completes from the server.
func (a *app) flagCompleters() map[string]completer {
	return map[string]completer{
		"pool":   completePools,
		"region": completeRegions,
		"job":    completeJobs,
	}
}

// addCompletions gives every command under root the completion of its
// positional arguments and of its pool, region and job flags.
func (a *app) addCompletions(root *cobra.Command) {
	byName, byFlag := a.completers(), a.flagCompleters()
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		cfg, _, err := loadClientConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, c := range cfg.Contexts {
			names = append(names, c.Name+"\t"+c.Addr)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.ValidArgsFunction == nil && cmd.Runnable() {
			placeholders := usageArgs(cmd.Use)
			var list []completer
			for _, p := range placeholders {
				if p == "PATH" && !underPool(cmd) {
					list = append(list, nil)
					continue
				}
				list = append(list, byName[p])
			}
			if len(list) > 0 {
				cmd.ValidArgsFunction = a.completeArg(list, strings.Contains(cmd.Use, "...]"))
			}
		}
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if c := byFlag[f.Name]; c != nil && f.Value.Type() == "string" {
				_ = cmd.RegisterFlagCompletionFunc(f.Name, a.completeFlag(c))
			}
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// underPool reports whether cmd is a `pool` subcommand, where PATH is a
// pool's path.
func underPool(cmd *cobra.Command) bool {
	return cmd.HasParent() && cmd.Parent().Name() == "pool" && cmd.Parent().HasParent() && !cmd.Parent().Parent().HasParent()
}

// usageArgs reads the positional argument placeholders of a usage line:
// "drain HOST_ID [--reason R]" → [HOST_ID]; "stop JOB_ID [INSTANCE...]" →
// [JOB_ID INSTANCE]. Flags and their values are left out.
func usageArgs(use string) []string {
	words := strings.Fields(use)
	var out []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		bare := strings.TrimLeft(w, "[")
		if strings.HasPrefix(bare, "-") {
			// A flag; its value follows unless the group closes here.
			if !strings.Contains(w, "]") && i+1 < len(words) && !strings.HasPrefix(strings.TrimLeft(words[i+1], "["), "-") {
				i++
			}
			continue
		}
		bare = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(bare, "]"), "..."), "]")
		if bare == "" || strings.ToUpper(bare) != bare || strings.ContainsAny(bare, "|") {
			continue
		}
		out = append(out, bare)
	}
	return out
}

// completeArg completes the argument at position len(args) with list's
// completer; with repeat, the last one completes every later argument.
func (a *app) completeArg(list []completer, repeat bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		i := len(args)
		if i >= len(list) {
			if !repeat {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			i = len(list) - 1
		}
		if list[i] == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return a.ask(cmd, list[i], args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func (a *app) completeFlag(c completer) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return a.ask(cmd, c, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// ask dials with the command's connection settings and runs c, keeping the
// candidates that start with toComplete. Any error completes nothing.
func (a *app) ask(cmd *cobra.Command, c completer, args []string, toComplete string) []string {
	a.flags = cmd.Flags()
	conn, err := a.dial()
	if err != nil {
		return nil
	}
	defer conn.conn.Close()
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, completeTimeout)
	defer cancel()
	var out []string
	for _, cand := range c(ctx, conn, args, toComplete) {
		if strings.HasPrefix(cand, toComplete) {
			out = append(out, cand)
		}
	}
	return out
}

// candidate renders one completion with its description; tabs and line
// breaks in the description would break the shell's parsing.
func candidate(value, description string) string {
	description = strings.Join(strings.Fields(description), " ")
	if description == "" {
		return value
	}
	return value + "\t" + description
}

func completeJobs(ctx context.Context, c *clients, _ []string, _ string) []string {
	resp, err := c.jobs.ListJobs(ctx, &pelotonv1.ListJobsRequest{})
	if err != nil {
		return nil
	}
	var out []string
	for _, j := range resp.GetJobs() {
		out = append(out, candidate(j.GetId(), j.GetSpec().GetName()+" ("+strings.ToLower(shortState(j.GetStatus().GetState()))+")"))
	}
	return out
}

// completeUpdates offers each job's latest update; once a job id and its
// dot are typed, every update of that job.
func completeUpdates(ctx context.Context, c *clients, _ []string, toComplete string) []string {
	if i := strings.LastIndexByte(toComplete, '.'); i > 0 {
		resp, err := c.jobs.ListUpdates(ctx, &pelotonv1.ListUpdatesRequest{JobId: toComplete[:i]})
		if err != nil {
			return nil
		}
		var out []string
		for _, u := range resp.GetUpdates() {
			out = append(out, candidate(u.GetId(), fmt.Sprintf("%s %d/%d", strings.ToLower(shortState(u.GetState())), u.GetInstancesDone(), u.GetInstancesTotal())))
		}
		return out
	}
	resp, err := c.jobs.ListJobs(ctx, &pelotonv1.ListJobsRequest{})
	if err != nil {
		return nil
	}
	var out []string
	for _, j := range resp.GetJobs() {
		if id := j.GetStatus().GetUpdateId(); id != "" {
			out = append(out, candidate(id, "latest update of "+j.GetSpec().GetName()))
		}
	}
	return out
}

func completeHosts(ctx context.Context, c *clients, _ []string, _ string) []string {
	resp, err := c.hosts.ListHosts(ctx, &pelotonv1.ListHostsRequest{})
	if err != nil {
		return nil
	}
	var out []string
	for _, h := range resp.GetHosts() {
		out = append(out, candidate(h.GetId(), strings.ToLower(shortState(h.GetState()))+" "+h.GetRegion()))
	}
	return out
}

func completePools(ctx context.Context, c *clients, _ []string, _ string) []string {
	resp, err := c.pools.ListPools(ctx, &pelotonv1.ListPoolsRequest{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range resp.GetPools() {
		out = append(out, candidate(p.GetPath(), fmt.Sprintf("%d jobs", p.GetJobs())))
	}
	sort.Strings(out)
	return out
}

func completeRegions(ctx context.Context, c *clients, _ []string, _ string) []string {
	resp, err := c.regions.ListRegions(ctx, &pelotonv1.ListRegionsRequest{})
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range resp.GetRegions() {
		out = append(out, candidate(r.GetName(), r.GetHealth()))
	}
	return out
}

// completeInstances offers the instances of the job named by the first
// argument (the first thousand).
func completeInstances(ctx context.Context, c *clients, args []string, _ string) []string {
	if len(args) == 0 {
		return nil
	}
	resp, err := c.tasks.ListTasks(ctx, &pelotonv1.ListTasksRequest{JobId: args[0], Limit: 1000})
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range resp.GetTasks() {
		out = append(out, candidate(strconv.FormatUint(uint64(t.GetInstance()), 10), strings.ToLower(shortState(t.GetState()))))
	}
	return out
}

func completeHostPools(ctx context.Context, c *clients, _ []string, _ string) []string {
	resp, err := c.hosts.ListHostPools(ctx, &pelotonv1.ListHostPoolsRequest{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range resp.GetHostPools() {
		out = append(out, candidate(p.GetName(), fmt.Sprintf("%d hosts", len(p.GetHosts()))))
	}
	return out
}
