package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/peloton-federated/peloton/shard/store/boltstore"
)

// storeFileFlag names the embedded store's file: a server's is
// DATADIR/store.db.
const storeFileFlag = "db"

func newStoreBackupCommand() *cobra.Command {
	var db, out string
	cmd := &cobra.Command{
		Use:   "backup --db DATADIR/store.db --out FILE",
		Short: "Copy the embedded store to a backup file (a consistent snapshot)",
		Long: `backup writes a consistent copy of an embedded (bbolt) store to FILE:
the store as one read transaction sees it. The server holds its store
file locked, so back up a stopped server's file (or a standby's copy);
the copy is itself a store file, which restore puts in place.

A Cassandra store is backed up with Cassandra's own tools (nodetool
snapshot on every node, then the snapshot directories): docs/operations.md.`,
		Example: `  peloton store backup --db /var/lib/peloton/store.db --out /backups/region-a.db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" || out == "" {
				return fmt.Errorf("--%s and --out are both required", storeFileFlag)
			}
			if _, err := os.Stat(db); err != nil {
				return fmt.Errorf("--%s: %w", storeFileFlag, err)
			}
			n, err := backupStore(db, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s (%d bytes)\n", db, out, n)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, storeFileFlag, "", "the store's file (a server's is DATADIR/store.db)")
	cmd.Flags().StringVar(&out, "out", "", "the backup file to write; must not exist")
	return cmd
}

// backupStore copies the store at db to a new file out, written whole
// before it gets its name.
func backupStore(db, out string) (n int64, err error) {
	st, err := boltstore.Open(db)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	if _, err := os.Stat(out); err == nil {
		return 0, fmt.Errorf("--out: %s exists", out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".*.partial")
	if err != nil {
		return 0, fmt.Errorf("--out: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	n, err = st.Backup(w)
	if err == nil {
		err = w.Flush()
	}
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		return 0, err
	}
	return n, os.Rename(tmp.Name(), out)
}

func newStoreRestoreCommand() *cobra.Command {
	var in, db string
	cmd := &cobra.Command{
		Use:   "restore --in FILE --db DATADIR/store.db",
		Short: "Put a backup in place as the embedded store of a fresh data directory",
		Long: `restore checks that FILE is a store file and puts it at --db, which must
not exist yet: a fresh data directory. A server started on it comes up
with the backup's jobs and adopts or runs again their tasks by the usual
at-least-once rule.`,
		Example: `  peloton store restore --in /backups/region-a.db --db /var/lib/peloton-new/store.db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" || db == "" {
				return fmt.Errorf("--in and --%s are both required", storeFileFlag)
			}
			f, err := os.Open(in)
			if err != nil {
				return fmt.Errorf("--in: %w", err)
			}
			defer f.Close()
			if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
				return fmt.Errorf("--%s: %w", storeFileFlag, err)
			}
			if err := boltstore.Restore(bufio.NewReader(f), db); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s to %s\n", in, db)
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "the backup file")
	cmd.Flags().StringVar(&db, storeFileFlag, "", "where the store's file goes (a server's is DATADIR/store.db); must not exist")
	return cmd
}
