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
// value is read as it is: the first read moves the old value into the
// parts not saved yet (a part already saved, as a move cut short leaves
// it, is kept) and empties it; the replica count per owner follows what
// was read and written.
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
	// job-001's part, saved before the move with job-001 relocated.
	early := federation.ReplicaPart("job-001")
	var earlyList []*pb.Replica
	for _, r := range old {
		if federation.ReplicaPart(r.GetJob().GetId()) == early {
			r = proto.Clone(r).(*pb.Replica)
			if r.GetJob().GetId() == "job-001" {
				r.RelocatedRegion = "north"
			}
			earlyList = append(earlyList, r)
		}
	}
	if err := v.write(ctx, v.partKey("west", early), earlyList); err != nil {
		t.Fatal(err)
	}
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
	if got := loadAll(); len(got) != 200 || got["job-001"].GetRelocatedRegion() != "north" {
		t.Fatalf("read %d replicas from the one-list layout (want 200), job-001 relocated to %q (want north, as its part was saved)", len(got), got["job-001"].GetRelocatedRegion())
	}
	if rest, err := v.read(ctx, v.key("west")); err != nil || len(rest) != 0 {
		t.Fatalf("the one list after the move: %d replicas, %v; want it emptied", len(rest), err)
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
