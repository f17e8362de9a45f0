package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/peloton-federated/peloton/gateway/auth"
)

func newTLSCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "tls", Short: "Certificates for a lab setup"}
	var l auth.LabPKI
	var regions, clients, hosts string
	var validity time.Duration
	initCmd := &cobra.Command{
		Use:   "init --dir DIR --regions a,b [--clients alice,bob] [--hosts 10.0.0.1,east.example]",
		Short: "Make a lab CA, a certificate per region and client certificates",
		Long: `init makes, in --dir, a CA (ca.crt, ca.key) and signs with it:

  <region>.crt/.key  a region's certificate (OU peloton-region, CN the region):
                     it serves the region's API port and is the region's
                     identity when it calls other regions (mutual TLS);
                     valid for localhost, 127.0.0.1, ::1, the region's name
                     and --hosts
  <client>.crt/.key  a client certificate (CN the client's name), for
                     peloton --cert/--key; the policy binds roles to the name

This is for labs and tests: production uses the operator's own PKI, with
the same subject conventions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if l.Dir == "" {
				return fmt.Errorf("--dir is required")
			}
			l.Regions, l.Clients, l.Hosts = split(regions), split(clients), split(hosts)
			if len(l.Regions) == 0 {
				return fmt.Errorf("--regions: at least one region")
			}
			l.Now, l.Validity = time.Now(), validity
			files, err := l.Init()
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
	f := initCmd.Flags()
	f.StringVar(&l.Dir, "dir", "", "directory for the CA and certificates (made with mode 0700)")
	f.StringVar(&regions, "regions", "", "region names, comma separated")
	f.StringVar(&clients, "clients", "", "client certificate names, comma separated")
	f.StringVar(&hosts, "hosts", "", "further DNS names and IP addresses of the regions' API ports, comma separated")
	f.DurationVar(&validity, "validity", 365*24*time.Hour, "how long the certificates are valid")
	cmd.AddCommand(initCmd)
	return cmd
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func init() { extraCommands = append(extraCommands, newTLSCommand) }
