package main

import (
	"os"

	"github.com/peloton-federated/peloton/cmd/peloton/cli"
	"github.com/peloton-federated/peloton/shard/hostmgr/local"
	"github.com/spf13/cobra"
)

// extraCommands are further (often hidden) commands that files of this
// package register in their init.
var extraCommands []func() *cobra.Command

func main() {
	// The executor role is started by the local host manager for every task;
	// it is dispatched before the CLI so it stays lean and hidden.
	if len(os.Args) > 1 && os.Args[1] == "executor" {
		os.Exit(local.ExecutorMain(os.Args[2:]))
	}
	root := cli.NewRootCommand()
	root.AddCommand(newDevCommand())
	for _, newCommand := range extraCommands {
		root.AddCommand(newCommand())
	}
	root.AddCommand(&cobra.Command{
		Use:    "executor --dir DIR -- COMMAND [ARGS...]",
		Short:  "Run one task under the local host manager (started by the server)",
		Hidden: true,
		Run:    func(*cobra.Command, []string) {},
	})
	os.Exit(cli.Main(root))
}
