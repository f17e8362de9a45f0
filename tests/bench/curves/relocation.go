package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation"
	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store/boltstore"
	"github.com/peloton-federated/peloton/tests/bench/inproc"
)

// relocationWhy explains a relocation that grows faster than the jobs it
// moves.
const relocationWhy = "the pass is sequential, one job after another, and each job's durable writes (the job in east's " +
	"store, its new replica in north's, the old replica marked in east's) share the disk and the two CPUs with the shard " +
	"creating, placing and persisting the tasks of the jobs relocated before it: timed apart, each write took 2 to 3 times " +
	"as long with 100 jobs as with 10"

// relocationCurve measures how long the federation takes to relocate a
// failed region's jobs, against the number of relocated tasks: region west
// has failed; region east holds west's replicas (jobs of perJob tasks,
// failover mode any) and relocates them into its own shard; region north
// is alive and answers east's failback check and holds replicas of the
// re-created jobs. All in one process: east's shard is a real
// jobmgr.Engine on boltstore with the sim host manager (hosts hosts),
// east's replicas are kept in the same boltstore (as the binary keeps them),
// north is a federation.Router on its own boltstore served over gRPC on
// loopback.
//
// Timed from the start of east's failover tick (federation.Failover.Tick)
// to (1) its return: the failback check against north, then for every
// replica the job re-created in east's shard (CreateJob, persisted), its new
// replica put at north and the old replica marked relocated; and to (2)
// every relocated task RUNNING in east's shard (placed, launched on the
// simulated hosts, persisted).
func relocationCurve(ctx context.Context, sizes []int, perJob, hosts, runs int, budget time.Duration, log func(string, ...any)) (*Curve, error) {
	c := &Curve{
		Name:   "relocation-vs-tasks",
		Title:  "Relocating a failed region's jobs against relocated tasks",
		XLabel: "relocated tasks", YLabel: "seconds", XName: "tasks",
		What: fmt.Sprintf("in process, real stores: region east relocates failed region west's jobs (%d tasks each) from the replicas it "+
			"holds into its own shard (jobmgr.Engine on boltstore, sim host manager, %d hosts); region north (a Router on boltstore, "+
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

// relocateOnce sets up east, west (failed) and north, relocates jobs of
// perJob tasks and returns the pass time and the time until all of them
// run.
func relocateOnce(ctx context.Context, jobs, perJob, hosts int, budget time.Duration) (pass, running time.Duration, err error) {
	dir, err := os.MkdirTemp("", "peloton-curves-relocation-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)

	// North: a peer region that holds replicas. East, not north, is
	// west's relocator: the first after west by name, wrapping around.
	northStore, err := boltstore.Open(filepath.Join(dir, "north.db"))
	if err != nil {
		return 0, 0, err
	}
	defer northStore.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	north := federation.NewRouter(nil, federation.NewStaticDirectory("north",
		[]federation.Region{{Name: "north"}, {Name: "east"}, {Name: "west", Health: "failed"}}), nil)
	north.SetReplicaStore(inproc.NewValueReplicas(northStore))
	defer north.Close()
	g := grpc.NewServer()
	north.Register(g)
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()

	// East: the region that relocates, with a real shard.
	eastStore, err := boltstore.Open(filepath.Join(dir, "east.db"))
	if err != nil {
		return 0, 0, err
	}
	east, err := inproc.StartRegion(ctx, inproc.RegionConfig{Name: "east", Hosts: hosts, Store: eastStore, Logger: quiet,
		HostShape: model.Resources{MilliCPU: 16000, MemMB: 65536, DiskMB: 100000},
		Directory: func(string) federation.Directory {
			return federation.NewStaticDirectory("east", []federation.Region{
				{Name: "east"}, {Name: "west", Health: "failed"}, {Name: "north", Addr: lis.Addr().String()}})
		}})
	if err != nil {
		return 0, 0, err
	}
	defer east.Stop()
	eng, replicas := east.Engine, east.Replicas

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
	if err := replicas.SaveAll(ctx, "west", list); err != nil {
		return 0, 0, err
	}

	start := time.Now()
	east.Failover.Tick(ctx)
	pass = time.Since(start)

	held, err := replicas.LoadAll(ctx, "west")
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
	err = inproc.WaitFor(ctx, budget, func() bool {
		got = 0
		for _, id := range ids {
			if j, err := eng.Reads().GetJob(id); err == nil {
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
