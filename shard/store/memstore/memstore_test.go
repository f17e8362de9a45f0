package memstore_test

import (
	"testing"

	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"github.com/peloton-federated/peloton/shard/store/storetest"
)

func TestContract(t *testing.T) {
	open := func(*testing.T) store.Store { return memstore.New() }
	storetest.Run(t, open)
	storetest.RunCopy(t, open, func() store.Whole { return memstore.New() })
}
