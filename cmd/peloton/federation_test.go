package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"google.golang.org/protobuf/proto"
)

// Replicas are kept in federation.ReplicaParts values per owner on the
// region's store. A store written when each owner's replicas were one
// value is read as it is: a part never saved since comes from the old
// value, a part saved since from its own; the replica count per owner
// follows what was read and written.
func TestValueReplicasReadTheOneListLayout(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "peloton.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var old []*pb.Replica
	for i := range 200 {
		old = append(old, &pb.Replica{OwnerRegion: "west", Job: &pb.Job{Id: fmt.Sprintf("job-%03d", i)}})
	}
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: old})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutValue(ctx, "federation/replicas/west", data); err != nil {
		t.Fatal(err)
	}
	book := newRegionBook()
	v := valueReplicas{st: st, book: book}
	loadAll := func() map[string]*pb.Replica {
		t.Helper()
		out := map[string]*pb.Replica{}
		for part := range federation.ReplicaParts {
			list, err := v.Load(ctx, "west", part)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range list {
				if federation.ReplicaPart(r.GetJob().GetId()) != part {
					t.Fatalf("part %d holds %s of part %d", part, r.GetJob().GetId(), federation.ReplicaPart(r.GetJob().GetId()))
				}
				out[r.GetJob().GetId()] = r
			}
		}
		return out
	}
	if got := loadAll(); len(got) != 200 {
		t.Fatalf("read %d replicas from the one-list layout, want 200", len(got))
	}
	if n := book.replicasOf("west"); n != 200 {
		t.Errorf("replica count %d, want 200", n)
	}

	// Saving job-007's part with a new job in it: that part is read from
	// its own value now, the others still from the old one.
	part := federation.ReplicaPart("job-007")
	list, err := v.Load(ctx, "west", part)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.GetJob().GetId() == "job-007" {
			r.RelocatedRegion = "east"
		}
	}
	newID := "job-new"
	for i := 0; federation.ReplicaPart(newID) != part; i++ {
		newID = fmt.Sprintf("job-new-%d", i) // a new job of the same part
	}
	if err := v.Save(ctx, "west", part, append(list, &pb.Replica{OwnerRegion: "west", Job: &pb.Job{Id: newID}})); err != nil {
		t.Fatal(err)
	}
	got := loadAll()
	if len(got) != 201 || got["job-007"].GetRelocatedRegion() != "east" || got[newID] == nil {
		t.Fatalf("after saving a part: %d replicas, job-007 relocated to %q, %s held %v", len(got), got["job-007"].GetRelocatedRegion(), newID, got[newID] != nil)
	}
	if n := book.replicasOf("west"); n != 201 {
		t.Errorf("replica count %d, want 201", n)
	}
}
