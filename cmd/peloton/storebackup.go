package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/peloton-federated/peloton/shard/auditlog"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/peloton-federated/peloton/shard/store/cassandra"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// storeFileFlag names the embedded store's file: a server's is
// DATADIR/store.db.
const storeFileFlag = "db"

// backupCassandra is where a backup is read from or restored to when the
// store is Cassandra, and how long the copied events and audit records
// are kept.
type backupCassandra struct {
	hosts, keyspace, replication string
	eventRetention               time.Duration
	auditRetention               time.Duration
}

func (c *backupCassandra) flags(f *pflag.FlagSet, restore bool) {
	f.StringVar(&c.hosts, "cassandra", "", "Cassandra contact points, HOST[:PORT][,HOST[:PORT]...], instead of --"+storeFileFlag)
	f.StringVar(&c.keyspace, "keyspace", cassandra.DefaultKeyspace, "with --cassandra: the keyspace holding the shard's tables")
	if restore {
		f.StringVar(&c.replication, "replication", "1", "with --cassandra: replication of the new keyspace, N or DC=N[,DC=N...] (as store migrate)")
	}
	f.DurationVar(&c.eventRetention, "event-retention", jobmgr.DefaultEventRetention, "with --cassandra: job and task history is kept this long after its time (the server's eventRetention)")
	f.DurationVar(&c.auditRetention, "audit-retention", auditlog.DefaultRetention, "with --cassandra: audit records are kept this long after their time (the server's auditRetention)")
}

func (c *backupCassandra) config() (cassandra.Config, store.CopyOptions, error) {
	var hosts []string
	for _, h := range strings.Split(c.hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	cfg := cassandra.Config{Hosts: hosts, Keyspace: c.keyspace}
	if len(hosts) == 0 {
		return cfg, store.CopyOptions{}, fmt.Errorf("--cassandra: no contact point in %q", c.hosts)
	}
	if c.replication != "" {
		repl, err := cassandra.ParseReplication(c.replication)
		if err != nil {
			return cfg, store.CopyOptions{}, fmt.Errorf("--replication: %w", err)
		}
		cfg.Replication = repl
	}
	for name, d := range map[string]time.Duration{"--event-retention": c.eventRetention, "--audit-retention": c.auditRetention} {
		if d <= 0 {
			return cfg, store.CopyOptions{}, fmt.Errorf("%s: must be positive, got %v", name, d)
		}
	}
	return cfg, store.CopyOptions{EventRetention: c.eventRetention, AuditRetention: c.auditRetention, Tables: kinds.Tables()}, nil
}

// source is a flag that names where a store is, and its value.
type source struct{ flag, value string }

// oneSource checks that exactly one of the sources is given.
func oneSource(sources ...source) error {
	var all, given []string
	for _, s := range sources {
		all = append(all, "--"+s.flag)
		if s.value != "" {
			given = append(given, "--"+s.flag)
		}
	}
	switch {
	case len(given) == 0:
		return fmt.Errorf("%s or %s is required", strings.Join(all[:len(all)-1], ", "), all[len(all)-1])
	case len(given) == 2:
		return fmt.Errorf("%s and %s: give one store, not both", given[0], given[1])
	case len(given) > 2:
		return fmt.Errorf("%s: give one store", strings.Join(given, ", "))
	}
	return nil
}

func newStoreBackupCommand() *cobra.Command {
	var db, out string
	var cass backupCassandra
	var srv serverBackup
	cmd := &cobra.Command{
		Use:   "backup (--server ADDR [--region R] | --db DATADIR/store.db | --cassandra HOSTS [--keyspace K]) --out FILE",
		Short: "Copy a region's store to a backup file",
		Long: `backup writes a region's store to FILE, itself an embedded (bbolt) store
file: the one backup format, which restore puts in place as an embedded
store or loads into a Cassandra keyspace.

--server: a consistent copy of a serving region's embedded store, made by
the server (one read transaction, beside the region's writes) and
streamed to FILE; the command checks its size and SHA-256 before FILE
gets its name. ADDR is a gateway, as --addr; --token, --ca, --cert/--key
and the current context are used as by every client command. --region
names the region (default: the one ADDR routes to). Admins only.

--db: a consistent copy of an embedded store file, as one read
transaction sees it. A serving server holds its store file locked: use
--server for it, --db for a stopped server's file (or a standby's copy).

--cassandra: a logical export of the keyspace, read through the store at
LOCAL_QUORUM while the region serves: every job with its configs, tasks,
updates and events, pools, named values, migrations, hosts and the audit
log. Each record is as one read saw it; the whole is not one instant of
the keyspace (docs/operations.md says what a restored region makes of it).`,
		Example: `  peloton store backup --server east.example:5390 --out /backups/region-a.db
  peloton store backup --server east.example:5390 --region west --out /backups/region-b.db
  peloton store backup --db /var/lib/peloton/store.db --out /backups/region-a.db
  peloton store backup --cassandra 10.0.0.1,10.0.0.2,10.0.0.3 --keyspace peloton --out /backups/region-a.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneSource(source{"server", srv.addr}, source{storeFileFlag, db}, source{"cassandra", cass.hosts}); err != nil {
				return err
			}
			if srv.region != "" && srv.addr == "" {
				return errors.New("--region: only with --server (a store file or a keyspace is one region's)")
			}
			if out == "" {
				return errors.New("--out is required")
			}
			if srv.addr != "" {
				return srv.run(cmd, out)
			}
			if db != "" {
				if _, err := os.Stat(db); err != nil {
					return fmt.Errorf("--%s: %w", storeFileFlag, err)
				}
				n, err := backupStore(cmd.Context(), db, out)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s (%d bytes)\n", db, out, n)
				return nil
			}
			cfg, opts, err := cass.config()
			if err != nil {
				return err
			}
			started := time.Now()
			n, err := backupCassandraStore(cmd.Context(), cfg, opts, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up keyspace %s to %s in %.1fs: %s\n", cfg.Keyspace, out, time.Since(started).Seconds(), countsLine(n))
			return nil
		},
	}
	cmd.Flags().StringVar(&db, storeFileFlag, "", "the embedded store's file (a server's is DATADIR/store.db)")
	cmd.Flags().StringVar(&out, "out", "", "the backup file to write; must not exist")
	srv.flags(cmd.Flags())
	cass.flags(cmd.Flags(), false)
	return cmd
}

// writeNew writes a new file out through write, which gets a temporary
// path beside it; out gets its name only once write succeeded, and never
// replaces a file that appeared meanwhile.
func writeNew(out string, write func(tmp string) error) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("--out: %s exists", out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".*.partial")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if err := write(tmp.Name()); err != nil {
		return err
	}
	// A link fails where out exists; a rename would replace it.
	err = os.Link(tmp.Name(), out)
	if err == nil {
		return nil
	}
	if _, serr := os.Stat(out); errors.Is(err, fs.ErrExist) || serr == nil {
		return fmt.Errorf("--out: %s exists", out)
	}
	// A file system without hard links: rename, having looked once more.
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// backupStore copies the store at db to a new file out, written whole
// before it gets its name.
func backupStore(ctx context.Context, db, out string) (n int64, err error) {
	st, err := boltstore.Open(db)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	err = writeNew(out, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		w := bufio.NewWriter(f)
		n, err = st.Backup(ctx, w)
		if err == nil {
			err = w.Flush()
		}
		return errors.Join(err, f.Sync(), f.Close())
	})
	return n, err
}

// backupCassandraStore exports the keyspace into a new embedded store
// file out.
func backupCassandraStore(ctx context.Context, cfg cassandra.Config, opts store.CopyOptions, out string) (n store.CopyCounts, err error) {
	src, err := cassandra.Open(ctx, cfg)
	if err != nil {
		return n, fmt.Errorf("--cassandra: %w", err)
	}
	defer src.Close()
	err = writeNew(out, func(tmp string) error {
		os.Remove(tmp) // boltstore makes its own file
		dst, err := boltstore.Open(tmp)
		if err != nil {
			return err
		}
		n, err = store.Copy(ctx, dst, src, opts)
		return errors.Join(err, dst.Close())
	})
	return n, err
}

func newStoreRestoreCommand() *cobra.Command {
	var in, db string
	var cass backupCassandra
	cmd := &cobra.Command{
		Use:   "restore --in FILE (--db DATADIR/store.db | --cassandra HOSTS --keyspace K [--replication R])",
		Short: "Put a backup in place as a fresh embedded store, or load it into a new Cassandra keyspace",
		Long: `restore checks that FILE is a store file (what backup writes, from either
store) and puts it in place:

--db: as the embedded store at that path, which must not exist yet: a
fresh data directory.

--cassandra: into the keyspace, created with --replication and the
current schema when it does not exist; a keyspace that holds any job,
pool or value is refused.

A server started on the restored store comes up with the backup's jobs
and adopts or runs again their tasks by the usual at-least-once rule.`,
		Example: `  peloton store restore --in /backups/region-a.db --db /var/lib/peloton-new/store.db
  peloton store restore --in /backups/region-a.db --cassandra 10.0.0.1,10.0.0.2,10.0.0.3 --keyspace peloton_restored --replication 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" {
				return errors.New("--in is required")
			}
			if err := oneSource(source{storeFileFlag, db}, source{"cassandra", cass.hosts}); err != nil {
				return err
			}
			f, err := os.Open(in)
			if err != nil {
				return fmt.Errorf("--in: %w", err)
			}
			defer f.Close()
			if db != "" {
				if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
					return fmt.Errorf("--%s: %w", storeFileFlag, err)
				}
				if err := boltstore.Restore(bufio.NewReader(f), db); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "restored %s to %s\n", in, db)
				return nil
			}
			cfg, opts, err := cass.config()
			if err != nil {
				return err
			}
			started := time.Now()
			n, err := restoreCassandraStore(cmd.Context(), f, cfg, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s to keyspace %s in %.1fs: %s\n", in, cfg.Keyspace, time.Since(started).Seconds(), countsLine(n))
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "the backup file")
	cmd.Flags().StringVar(&db, storeFileFlag, "", "where the embedded store's file goes (a server's is DATADIR/store.db); must not exist")
	cass.flags(cmd.Flags(), true)
	return cmd
}

// restoreCassandraStore loads the backup read from in into the keyspace
// of cfg, migrated first (created when missing). The backup is read from
// a private copy, so that the file given is never changed.
func restoreCassandraStore(ctx context.Context, in io.Reader, cfg cassandra.Config, opts store.CopyOptions) (n store.CopyCounts, err error) {
	dir, err := os.MkdirTemp("", "peloton-restore-")
	if err != nil {
		return n, err
	}
	defer os.RemoveAll(dir)
	copyPath := filepath.Join(dir, "store.db")
	if err := boltstore.Restore(bufio.NewReader(in), copyPath); err != nil {
		return n, fmt.Errorf("--in: %w", err)
	}
	src, err := boltstore.Open(copyPath)
	if err != nil {
		return n, fmt.Errorf("--in: %w", err)
	}
	defer src.Close()
	if _, err := cassandra.Migrate(ctx, cfg); err != nil {
		return n, fmt.Errorf("--cassandra: %w", err)
	}
	dst, err := cassandra.Open(ctx, cfg)
	if err != nil {
		return n, fmt.Errorf("--cassandra: %w", err)
	}
	defer dst.Close()
	if n, err = store.Copy(ctx, dst, src, opts); errors.Is(err, store.ErrNotEmpty) {
		return n, fmt.Errorf("--keyspace: %s: %w; restore into a new keyspace", cfg.Keyspace, err)
	}
	return n, err
}

// countsLine says what a copy wrote.
func countsLine(n store.CopyCounts) string {
	return fmt.Sprintf("%d jobs (%d configs, %d tasks, %d updates, %d events), %d pools, %d values, %d migrations, %d hosts, %d audit records",
		n.Jobs, n.Configs, n.Tasks, n.Updates, n.Events, n.Records[kinds.PoolTable.Name], n.Records[kinds.ValueTable.Name], n.Records[kinds.MigrationTable.Name], n.Records[kinds.HostTable.Name], n.Audit)
}
