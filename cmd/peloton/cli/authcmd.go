package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
)

func actionNames() string {
	names := make([]string, len(auth.Actions))
	for i, a := range auth.Actions {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

func (a *app) authCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "auth", Short: "Who you are to the server, what you may do, and tokens"}
	cmd.AddCommand(&cobra.Command{
		Use:   "whoami",
		Short: "Print the name, the way of authentication and the roles the server sees",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.auth.WhoAmI(ctx, &pelotonv1.WhoAmIRequest{})
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			roles := strings.Join(resp.GetRoles(), "; ")
			if roles == "" {
				roles = "none"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s (%s)\nroles: %s\n", resp.GetName(), resp.GetMethod(), roles)
			return nil
		}),
	})
	var pool, job string
	canI := &cobra.Command{
		Use:   "can-i ACTION [--pool P | --job ID]",
		Short: "Say whether you may take an action (yes or no, and why); exit 0 for yes, 7 for no",
		Long:  "Actions: " + actionNames() + ".",
		Example: `  peloton auth can-i create-job --pool /maps/batch
  peloton auth can-i stop-job --job 8f14e45f
  peloton auth can-i manage-host`,
		Args: args(cobra.ExactArgs(1)),
		RunE: a.connected(func(cmd *cobra.Command, argv []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.auth.CanI(ctx, &pelotonv1.CanIRequest{Action: argv[0], Pool: pool, JobId: job})
			if err != nil {
				return err
			}
			if a.output != "table" {
				if err := writeStructured(cmd.OutOrStdout(), a.output, resp); err != nil {
					return err
				}
			} else {
				answer := "no"
				if resp.GetAllowed() {
					answer = "yes"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", answer, resp.GetReason())
			}
			if !resp.GetAllowed() {
				return &exitError{code: ExitDenied}
			}
			return nil
		}),
	}
	canI.Flags().StringVar(&pool, "pool", "", "the pool acted on")
	canI.Flags().StringVar(&job, "job", "", "the job acted on (its pool is looked up)")
	cmd.AddCommand(canI)

	cmd.AddCommand(a.policyCommand())

	var file string
	token := &cobra.Command{Use: "token", Short: "Bearer tokens of a server's token file"}
	create := &cobra.Command{
		Use:   "create NAME --file TOKENS",
		Short: "Make a token for NAME, add its SHA-256 to the token file and print the token (only this once)",
		Long: `create makes a random token, appends its name and SHA-256 to the token
file (made with mode 0600 when missing; a running server reads it again
within a second) and prints the token. The file never holds the token:
keep the printed one, it cannot be recovered. Bind roles to NAME in the
policy file.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if file == "" {
				return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("--file is required")}
			}
			tok, err := auth.AddToken(file, argv[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	create.Flags().StringVar(&file, "file", "", "the server's token file")
	token.AddCommand(create)
	cmd.AddCommand(token)
	return cmd
}

func (a *app) policyCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "The role bindings of the region (get; set, when the store keeps them)"}
	printDoc := func(cmd *cobra.Command, resp proto.Message, doc *pelotonv1.PolicyDocument) error {
		if a.output != "table" {
			return writeStructured(cmd.OutOrStdout(), a.output, resp)
		}
		head := "# source: " + doc.GetSource()
		if doc.GetSetBy() != "" {
			head += ", set by " + doc.GetSetBy() + " at " + doc.GetSetAt().AsTime().Local().Format(time.DateTime)
		}
		if !doc.GetEditable() {
			head += " (read only: auth.policySource is file)"
		}
		fmt.Fprintln(cmd.OutOrStdout(), head)
		fmt.Fprint(cmd.OutOrStdout(), doc.GetYaml())
		if !strings.HasSuffix(doc.GetYaml(), "\n") {
			fmt.Fprintln(cmd.OutOrStdout())
		}
		return nil
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "get",
		Short: "Print the policy in force (YAML) and where it comes from",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.auth.GetPolicy(ctx, &pelotonv1.GetPolicyRequest{})
			if err != nil {
				return err
			}
			return printDoc(cmd, resp, resp.GetPolicy())
		}),
	})
	var file string
	set := &cobra.Command{
		Use:   "set -f POLICY",
		Short: "Replace the region's policy with a policy file's bindings (admins; auth.policySource: store)",
		Long: `set replaces the role bindings of the region the client talks to with the
content of a policy file (- for standard input). The server keeps it in its
store, refuses a policy that binds no admin or that takes the admin role
from you, and records the change in the audit log. Policies are per region:
set it in every region.`,
		Example: `  peloton auth policy get > policy.yaml
  peloton auth policy set -f policy.yaml`,
		Args: args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			if file == "" {
				return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("-f is required")}
			}
			var raw []byte
			var err error
			if file == "-" {
				raw, err = io.ReadAll(cmd.InOrStdin())
			} else {
				raw, err = os.ReadFile(file)
			}
			if err != nil {
				return err
			}
			if _, err := auth.ParsePolicy(raw); err != nil {
				return &usageError{command: cmd.CommandPath(), err: fmt.Errorf("%s: %w", file, err)}
			}
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			resp, err := c.auth.SetPolicy(ctx, &pelotonv1.SetPolicyRequest{Policy: string(raw)})
			if err != nil {
				return err
			}
			return printDoc(cmd, resp, resp.GetPolicy())
		}),
	}
	set.Flags().StringVarP(&file, "file", "f", "", "the policy file (- for standard input)")
	cmd.AddCommand(set)
	return cmd
}

func (a *app) auditCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "The audit log of mutating calls"}
	var name string
	var since time.Duration
	var limit uint32
	list := &cobra.Command{
		Use:   "list [--name N] [--since 1h] [--limit 100]",
		Short: "List the mutating calls the region's gateway saw: when, who, what, on what, how it ended",
		Args:  args(cobra.NoArgs),
		RunE: a.connected(func(cmd *cobra.Command, _ []string, c *clients) error {
			ctx, cancel := a.rpc(cmd.Context())
			defer cancel()
			req := &pelotonv1.ListAuditRequest{Name: name, Limit: limit}
			if since > 0 {
				req.Since = timestamppb.New(a.clock.Now().Add(-since))
			}
			resp, err := c.audit.ListAudit(ctx, req)
			if err != nil {
				return err
			}
			if a.output != "table" {
				return writeStructured(cmd.OutOrStdout(), a.output, resp)
			}
			t := newTable(cmd.OutOrStdout(), "TIME", "WHO", "VIA", "ACTION", "RESOURCE", "RESULT")
			for _, r := range resp.GetRecords() {
				via := r.GetForwardedBy()
				if via == "" {
					via = "-"
				}
				result := r.GetCode()
				if r.GetMessage() != "" {
					result += ": " + r.GetMessage()
				}
				action := r.GetAction()
				if action == "" {
					action = r.GetRpc()
				}
				t.row(r.GetTime().AsTime().Local().Format(time.DateTime), r.GetName()+" ("+r.GetMethod()+")", via, action, r.GetResource(), result)
			}
			return t.flush()
		}),
	}
	list.Flags().StringVar(&name, "name", "", "only this caller's calls")
	list.Flags().DurationVar(&since, "since", 0, "only calls of this last while, such as 1h")
	list.Flags().Uint32Var(&limit, "limit", 100, "the newest this many")
	cmd.AddCommand(list)
	return cmd
}
