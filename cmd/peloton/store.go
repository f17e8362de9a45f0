package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/peloton-federated/peloton/shard/store/cassandra"
)

// newStoreCommand is `peloton store`: operations on a shard's store.
func newStoreCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Manage a shard's store (Cassandra schema migrations, backup and restore of either store)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newStoreMigrateCommand(), newStoreBackupCommand(), newStoreRestoreCommand())
	return cmd
}

type migrateOptions struct {
	hosts       string
	keyspace    string
	replication string
	consistency string
	timeout     time.Duration
}

func newStoreMigrateCommand() *cobra.Command {
	o := migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate --cassandra HOSTS [--keyspace K] [--replication R]",
		Short: "Create the Cassandra keyspace if needed and apply missing schema migrations",
		Long: `migrate brings a Cassandra keyspace to the schema this build uses: it
creates the keyspace when it does not exist (with --replication), then
applies, in order, every migration not yet recorded in its
schema_migrations table. It is idempotent: running it again does nothing,
and two runs at once are safe. It never changes the replication of an
existing keyspace (use ALTER KEYSPACE for that).

--replication is a number N for SimpleStrategy with N copies (one data
center), or DC=N[,DC=N...] for NetworkTopologyStrategy, e.g.
"us-east=3,eu-west=3" with one data center per region.`,
		Example: `  peloton store migrate --cassandra 127.0.0.1:9042 --keyspace peloton
  peloton store migrate --cassandra 10.0.0.1,10.0.0.2 --keyspace peloton --replication us-east=3,eu-west=3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStoreMigrate(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.hosts, "cassandra", "", "Cassandra contact points, HOST[:PORT][,HOST[:PORT]...] (required)")
	f.StringVar(&o.keyspace, "keyspace", cassandra.DefaultKeyspace, "keyspace holding the shard's tables")
	f.StringVar(&o.replication, "replication", "1", "replication of a new keyspace: N (SimpleStrategy) or DC=N[,DC=N...] (NetworkTopologyStrategy)")
	f.StringVar(&o.consistency, "consistency", "LOCAL_QUORUM", "consistency of the migration's reads and writes")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long")
	return cmd
}

func runStoreMigrate(ctx context.Context, out io.Writer, o migrateOptions) error {
	if strings.TrimSpace(o.hosts) == "" {
		return fmt.Errorf("--cassandra: required, e.g. --cassandra 127.0.0.1:9042")
	}
	repl, err := cassandra.ParseReplication(o.replication)
	if err != nil {
		return fmt.Errorf("--replication: %w", err)
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout: must be positive, got %v", o.timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var hosts []string
	for _, h := range strings.Split(o.hosts, ",") {
		hosts = append(hosts, strings.TrimSpace(h))
	}
	res, err := cassandra.Migrate(ctx, cassandra.Config{
		Hosts: hosts, Keyspace: o.keyspace, Replication: repl, Consistency: o.consistency,
	})
	if err != nil {
		return fmt.Errorf("store migrate: %w", err)
	}
	if res.CreatedKeyspace {
		fmt.Fprintf(out, "created keyspace %s with replication %s\n", res.Keyspace, repl.CQL())
	}
	if len(res.Applied) == 0 {
		fmt.Fprintf(out, "keyspace %s is at schema version %d; nothing to apply\n", res.Keyspace, res.Version)
		return nil
	}
	applied := make([]string, len(res.Applied))
	for i, v := range res.Applied {
		applied[i] = fmt.Sprint(v)
	}
	fmt.Fprintf(out, "applied migrations %s; keyspace %s is at schema version %d\n",
		strings.Join(applied, ", "), res.Keyspace, res.Version)
	return nil
}

func init() { extraCommands = append(extraCommands, newStoreCommand) }
