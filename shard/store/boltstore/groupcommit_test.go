package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Concurrent writes share transactions; a write that fails fails alone,
// and every other write of its group is committed.
func TestGroupCommit(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "g.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	g := newGroupCommit(db)
	errBad := errors.New("bad write")
	const writers = 200
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.run(func(tx *bolt.Tx) error {
				if i%50 == 7 {
					return errBad
				}
				return tx.Bucket([]byte("b")).Put([]byte(fmt.Sprintf("k%03d", i)), []byte("v"))
			})
		}()
	}
	wg.Wait()
	stored := 0
	_ = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("b")).ForEach(func(k, v []byte) error { stored++; return nil })
	})
	for i, err := range errs {
		switch {
		case i%50 == 7 && !errors.Is(err, errBad):
			t.Errorf("write %d: %v, want its own error", i, err)
		case i%50 != 7 && err != nil:
			t.Errorf("write %d: %v", i, err)
		}
	}
	if stored != writers-4 {
		t.Fatalf("%d keys stored, want %d", stored, writers-4)
	}
}
