package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the store's file to w and returns
// its size: the file as one read transaction sees it, so writes carry on
// while it runs and none is in the copy in part. The copy is a store file
// itself (Restore, or Open). Cancelling ctx ends the copy, and with it
// the read transaction, before the next write to w.
//
// A read transaction keeps bbolt from remapping the file, so a write that
// grows it waits until the copy ends: write to something fast (a local
// file), not to a slow reader.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(ctxWriter{ctx: ctx, w: w})
		return err
	})
	switch {
	case err == nil:
		return n, nil
	case ctx.Err() != nil:
		// bbolt reports the writer's error as text: the cause is ours.
		return n, fmt.Errorf("boltstore: backup of %s: %w", s.Path(), ctx.Err())
	}
	return n, fmt.Errorf("boltstore: backup of %s: %w", s.Path(), backendError(err))
}

// ctxWriter refuses writes once its context ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// Restore makes the store file at path from a copy Backup wrote: it
// refuses to replace a file that exists, checks the copy by opening it as
// a store, and moves it into place only then, so a failed restore leaves
// no file at path.
func Restore(from io.Reader, path string) (err error) {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("boltstore: restore: %s exists; restore into a path with no store", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("boltstore: restore: %w", err)
	}
	tmp := path + ".restoring"
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("boltstore: restore: %w", err)
	}
	if _, err := io.Copy(f, from); err != nil {
		f.Close()
		return fmt.Errorf("boltstore: restore: copy: %w", err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("boltstore: restore: %w", err)
	}
	st, err := Open(tmp)
	if err != nil {
		return fmt.Errorf("boltstore: restore: the backup is not a store file: %w", err)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("boltstore: restore: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("boltstore: restore: %w", err)
	}
	return nil
}
