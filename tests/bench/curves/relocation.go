package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/hostmgr/sim"
	"github.com/peloton-federated/peloton/shard/jobmgr"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/service"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
)

// relocationWhy explains a relocation that grows faster than the jobs it
// moves.
const relocationWhy = "the pass is sequential, one job after another, and each job's durable writes (the job in east's " +
	"store, its new replica in central's, the old replica marked in east's) share the disk and the two CPUs with the shard " +
	"creating, placing and persisting the tasks of the jobs relocated before it: timed apart, each write took 2 to 3 times " +
	"as long with 100 jobs as with 10"

// relocationCurve measures how long the federation takes to relocate a
// failed region's jobs, against the number of relocated tasks: region west
// has failed; region east holds west's replicas (jobs of perJob tasks,
// failover mode any) and relocates them into its own shard; region central
// is alive and answers east's failback check and holds replicas of the
// re-created jobs. All in one process: east's shard is a real
// jobmgr.Engine on boltstore with the sim host manager (hosts hosts),
// east's replicas are kept in the same boltstore (as the binary keeps them),
// central is a federation.Router on its own boltstore served over gRPC on
// loopback.
//
// Timed from the start of east's failover tick (federation.Failover.Tick)
// to (1) its return: the failback check against central, then for every
// replica the job re-created in east's shard (CreateJob, persisted), its new
// replica put at central and the old replica marked relocated; and to (2)
// every relocated task RUNNING in east's shard (placed, launched on the
// simulated hosts, persisted).
func relocationCurve(ctx context.Context, sizes []int, perJob, hosts, runs int, budget time.Duration, log func(string, ...any)) (*Curve, error) {
	c := &Curve{
		Name:   "relocation-vs-tasks",
		Title:  "Relocating a failed region's jobs against relocated tasks",
		XLabel: "relocated tasks", YLabel: "seconds", XName: "tasks",
		What: fmt.Sprintf("in process, real stores: region east relocates failed region west's jobs (%d tasks each) from the replicas it "+
			"holds into its own shard (jobmgr.Engine on boltstore, sim host manager, %d hosts); region central (a Router on boltstore, "+
			"gRPC on loopback) answers the failback check and takes the new replicas. Timed from the start of east's failover "+
			"tick (federation.Failover.Tick).", perJob, hosts),
		Columns: []string{"tasks", "jobs", "relocation_pass_s", "all_running_s"},
		Plots: []Plot{
			{Column: "relocation_pass_s", Label: "relocation pass: every job re-created, persisted, replicated", Growth: Cost, WhyNotLinear: relocationWhy},
			{Column: "all_running_s", Label: "until every relocated task is RUNNING", Growth: Cost, WhyNotLinear: relocationWhy},
		},
	}
	rows, err := interleaved(sizes, runs, func(n int) ([]float64, error) {
		jobs := max(n/perJob, 1)
		pass, running, err := relocateOnce(ctx, jobs, perJob, hosts, budget)
		if err != nil {
			return nil, fmt.Errorf("relocating %d tasks: %w", jobs*perJob, err)
		}
		log("relocation: %d tasks in %d jobs: pass %.3fs, all running %.3fs", jobs*perJob, jobs, pass.Seconds(), running.Seconds())
		return []float64{float64(jobs * perJob), float64(jobs), pass.Seconds(), running.Seconds()}, nil
	})
	if err != nil {
		return nil, err
	}
	for _, runs := range rows {
		c.Rows = append(c.Rows, medianRow(runs))
	}
	c.Notes = []string{
		fmt.Sprintf("Each figure is the median of %d runs, each on fresh stores, the runs of all sizes interleaved.", runs),
		"The pass does a fixed amount of work per relocated job (one CreateJob persisted, one replica put at the peer, " +
			"one replica record rewritten) and none per task: the new job's tasks are created by the shard's goal-state " +
			"loop while the pass goes on, which is why every task runs soon after the pass ends. The replica lists are one " +
			"stored value per owner region, rewritten whole on every put: that part grows with the jobs held, but stays " +
			"small here (about 100 replicas).",
		"What would make it shorter: re-create the jobs of a failed region concurrently, or with one " +
			"batch-create call, and record the relocations in one replica write instead of one per job.",
	}
	return c, nil
}

// relocateOnce sets up east, west (failed) and central, relocates jobs of
// perJob tasks and returns the pass time and the time until all of them
// run.
func relocateOnce(ctx context.Context, jobs, perJob, hosts int, budget time.Duration) (pass, running time.Duration, err error) {
	dir, err := os.MkdirTemp("", "peloton-curves-relocation-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)

	// Central: a peer region that holds replicas.
	centralStore, err := boltstore.Open(filepath.Join(dir, "central.db"))
	if err != nil {
		return 0, 0, err
	}
	defer centralStore.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	central := federation.NewRouter(nil, federation.NewStaticDirectory("central",
		[]federation.Region{{Name: "central"}, {Name: "east"}, {Name: "west", Health: "failed"}}), nil)
	central.SetReplicaStore(valueReplicas{st: centralStore})
	defer central.Close()
	g := grpc.NewServer()
	central.Register(g)
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()

	// East: the region that relocates, with a real shard.
	eastStore, err := boltstore.Open(filepath.Join(dir, "east.db"))
	if err != nil {
		return 0, 0, err
	}
	defer eastStore.Close()
	plugin, err := sim.New(sim.Config{Cluster: "sim", DefaultDuration: 24 * time.Hour,
		Generate: sim.Generator{Count: hosts, Shape: model.Resources{MilliCPU: 16000, MemMB: 65536, DiskMB: 100000}}})
	if err != nil {
		return 0, 0, err
	}
	eng := jobmgr.New(jobmgr.Config{Region: "east", Store: eastStore, Plugins: []hostmgr.Plugin{plugin}, Logger: quiet})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(runCtx) }()
	defer func() { stop(); <-done }()
	select {
	case <-eng.Ready():
	case <-done:
		return 0, 0, errors.New("east's engine stopped before it was ready")
	}
	if err := waitFor(ctx, 30*time.Second, func() bool {
		got, _ := eng.Hosts().Capacity()
		return got.MilliCPU >= int64(hosts)*16000
	}); err != nil {
		return 0, 0, fmt.Errorf("east's hosts: %w", err)
	}
	eastDir := federation.NewStaticDirectory("east", []federation.Region{
		{Name: "east"}, {Name: "west", Health: "failed"}, {Name: "central", Addr: lis.Addr().String()}})
	east := federation.NewRouter(service.New(eng, "curves", ""), eastDir, nil)
	defer east.Close()
	replicas := valueReplicas{st: eastStore}
	east.SetReplicaStore(replicas)

	// West's jobs, as east holds their replicas.
	list := make([]*pb.Replica, jobs)
	for i := range list {
		list[i] = &pb.Replica{OwnerRegion: "west", Job: &pb.Job{
			Id: fmt.Sprintf("west-job-%05d", i), ConfigVersion: 1,
			Spec: &pb.JobSpec{
				Name: fmt.Sprintf("relocatable-%05d", i), Type: pb.JobType_JOB_TYPE_BATCH, Pool: "/", Region: "west",
				Preemptible: true, Instances: uint32(perJob),
				Failover: &pb.FailoverPolicy{Mode: pb.FailoverPolicy_MODE_ANY},
				Task:     &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 0.01, MemMb: 16}},
			},
		}}
	}
	if err := replicas.Save(ctx, "west", list); err != nil {
		return 0, 0, err
	}

	f := federation.NewFailover(east, eng.SetFenced, quiet, time.Hour)
	start := time.Now()
	f.Tick(ctx)
	pass = time.Since(start)

	held, err := replicas.Load(ctx, "west")
	if err != nil {
		return 0, 0, err
	}
	var ids []model.JobID
	for _, rep := range held {
		if rep.GetRelocatedRegion() != "east" || rep.GetRelocatedJobId() == "" {
			return 0, 0, fmt.Errorf("replica %s not relocated to east: %q", rep.GetJob().GetId(), rep.GetRelocatedRegion())
		}
		ids = append(ids, model.JobID(rep.GetRelocatedJobId()))
	}
	want := jobs * perJob
	var got int
	err = waitFor(ctx, budget, func() bool {
		got = 0
		for _, id := range ids {
			if j, err := eng.GetJob(id); err == nil {
				got += int(j.Status.TaskStates[model.TaskRunning])
			}
		}
		return got >= want
	})
	if err != nil {
		return 0, 0, fmt.Errorf("%d of %d relocated tasks running: %w", got, want, err)
	}
	return pass, time.Since(start), nil
}

// waitFor polls cond every 5 ms until it holds, the limit passes or ctx
// ends.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// valueReplicas keeps a region's replicas of other regions' jobs in its
// store's named values, one value per owner region, as the binary does.
type valueReplicas struct{ st store.ValueStore }

func (v valueReplicas) key(owner string) string { return "federation/replicas/" + owner }

func (v valueReplicas) Load(ctx context.Context, owner string) ([]*pb.Replica, error) {
	data, err := v.st.GetValue(ctx, v.key(owner))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list pb.ListReplicasResponse
	if err := proto.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	return list.Replicas, nil
}

func (v valueReplicas) Save(ctx context.Context, owner string, replicas []*pb.Replica) error {
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: replicas})
	if err != nil {
		return err
	}
	return v.st.PutValue(ctx, v.key(owner), data)
}
