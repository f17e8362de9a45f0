package federation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// gatedReplicas is memReplicas whose first Save says it started, then
// waits for open.
type gatedReplicas struct {
	memReplicas
	entered, open chan struct{}
	first         sync.Once
}

func (g *gatedReplicas) Save(ctx context.Context, owner string, part int, reps []*pb.Replica) error {
	g.first.Do(func() { close(g.entered); <-g.open })
	return g.memReplicas.Save(ctx, owner, part, reps)
}

// Puts that arrive while a list is being written are written together in
// the next write (each part of the list they fall in once), each as a put
// alone would: new replicas added, updates
// keeping the relocation recorded and the spec as submitted.
func TestReplicaPutsArrivingTogetherAreWrittenOnce(t *testing.T) {
	st := &gatedReplicas{memReplicas: memReplicas{reps: map[string][]*pb.Replica{"east": {
		{OwnerRegion: "east", RelocatedRegion: "west", Job: &pb.Job{Id: "j-00", Spec: &pb.JobSpec{Name: "as submitted", Failover: &pb.FailoverPolicy{}}}},
	}}}, entered: make(chan struct{}), open: make(chan struct{})}
	b := &replicaBook{store: st}
	ctx := context.Background()
	errs := make(chan error, 20)
	go func() { errs <- b.put(ctx, &pb.Replica{OwnerRegion: "east", Job: &pb.Job{Id: "j-first"}}) }()
	// The first put holds the list while its write waits; the others queue.
	waitQueued := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			b.qmu.Lock()
			got := len(b.queued["east"])
			b.qmu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d puts queued, want %d", got, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	<-st.entered
	for i := range 19 {
		go func() {
			errs <- b.put(ctx, &pb.Replica{OwnerRegion: "east", Job: &pb.Job{Id: fmt.Sprintf("j-%02d", i), Spec: &pb.JobSpec{Name: "progress"}}})
		}()
	}
	waitQueued(19)
	close(st.open)
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	parts := map[int]bool{}
	for i := range 19 {
		parts[ReplicaPart(fmt.Sprintf("j-%02d", i))] = true
	}
	if n := st.saves(); n != 1+len(parts) {
		t.Errorf("20 puts saved %d parts of the list, want %d: the first alone, then each part the 19 queued behind it fall in once", n, 1+len(parts))
	}
	list, _ := b.list(ctx, "east")
	if len(list) != 20 {
		t.Fatalf("%d replicas held, want 20", len(list))
	}
	for i, rep := range list {
		if i > 0 && list[i-1].GetJob().GetId() >= rep.GetJob().GetId() {
			t.Fatalf("replicas not sorted by job id: %s before %s", list[i-1].GetJob().GetId(), rep.GetJob().GetId())
		}
	}
	if j := list[0]; j.GetJob().GetId() != "j-00" || j.GetRelocatedRegion() != "west" || j.GetJob().GetSpec().GetName() != "as submitted" {
		t.Errorf("updated replica %v: the relocation or the spec as submitted was lost", j)
	}
}
