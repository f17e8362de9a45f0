package auth

import (
	"fmt"
	"slices"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Target is what a call acts on.
type Target struct {
	// Pools are the pools the request names (a job spec's pool, a pool's
	// path).
	Pools []string
	// Job is a job the call acts on: its pool is looked up when the
	// decision turns on it.
	Job string
	// Resource names it for the audit log: "job <id>", "pool /a", ...
	Resource string
	// Outcome, for a call that acts on many things (CreateJobs), says for
	// the audit log what became of them; set once the call has run.
	Outcome string
}

// Rule maps an RPC to an action and what it acts on.
type Rule struct {
	Action Action
	// Target reads the request; nil for calls that act on nothing in
	// particular.
	Target func(req any) Target
	// Items, for a call that acts on many things at once, reads what each
	// acts on (CreateJobs: each spec's pool). A caller whose right turns on
	// the pools is authorised item by item: the call goes on with the items
	// allowed, each other one refused on its own.
	Items func(req any) []Target
}

func jobTarget(id string) Target { return Target{Job: id, Resource: "job " + id} }

func poolTarget(path string) Target {
	p := cleanPool(path)
	if p == "" {
		p = path
	}
	return Target{Pools: []string{p}, Resource: "pool " + p}
}

// updateJob is the job of an update id "<job id>.<version>".
func updateJob(updateID string) Target {
	job := updateID
	if i := strings.LastIndexByte(updateID, '.'); i > 0 {
		job = updateID[:i]
	}
	t := jobTarget(job)
	t.Resource = "update " + updateID
	return t
}

func read() Rule { return Rule{Action: ActRead} }

// maxTargetPools bounds how many pools a batch's audit record names.
const maxTargetPools = 8

// createJobsTarget is what a CreateJobs call acts on, for the audit log:
// how many jobs, in which pools, under which request id.
func createJobsTarget(r any) Target {
	req := r.(*pb.CreateJobsRequest)
	seen := map[string]bool{}
	var pools []string
	for _, spec := range req.GetJobs() {
		p := poolTarget(spec.GetPool()).Pools[0]
		if !seen[p] {
			seen[p] = true
			pools = append(pools, p)
		}
	}
	slices.Sort(pools)
	named := pools
	if len(named) > maxTargetPools {
		named = named[:maxTargetPools]
	}
	res := fmt.Sprintf("%d jobs in pools %s", len(req.GetJobs()), strings.Join(named, ", "))
	if len(pools) > len(named) {
		res += fmt.Sprintf(" and %d more", len(pools)-len(named))
	}
	if req.GetRequestId() != "" {
		res += ", request " + req.GetRequestId()
	}
	return Target{Resource: res}
}

// Rules of every RPC of the v1 API, by full method name. A method that is
// not here is refused to everyone (TestEveryRPCHasARule keeps it whole).
var Rules = map[string]Rule{
	pb.JobService_CreateJob_FullMethodName: {Action: ActCreateJob, Target: func(r any) Target {
		spec := r.(*pb.CreateJobRequest).GetSpec()
		t := poolTarget(spec.GetPool())
		if spec.GetName() != "" {
			t.Resource += ", job name " + spec.GetName()
		}
		return t
	}},
	pb.JobService_CreateJobs_FullMethodName: {Action: ActCreateJob, Target: createJobsTarget, Items: func(r any) []Target {
		specs := r.(*pb.CreateJobsRequest).GetJobs()
		out := make([]Target, len(specs))
		for i, spec := range specs {
			out[i] = poolTarget(spec.GetPool())
		}
		return out
	}},
	pb.JobService_GetJob_FullMethodName:       read(),
	pb.JobService_ListJobs_FullMethodName:     read(),
	pb.JobService_GetUpdate_FullMethodName:    read(),
	pb.JobService_ListUpdates_FullMethodName:  read(),
	pb.JobService_GetJobConfig_FullMethodName: read(),
	pb.JobService_ListEvents_FullMethodName:   read(),
	pb.JobService_StopJob_FullMethodName: {Action: ActStopJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.StopJobRequest).GetId())
	}},
	pb.JobService_DeleteJob_FullMethodName: {Action: ActDeleteJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.DeleteJobRequest).GetId())
	}},
	pb.JobService_SuspendJob_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.SuspendJobRequest).GetId())
	}},
	pb.JobService_ResumeJob_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.ResumeJobRequest).GetId())
	}},
	// A run by hand is a new job in the periodic job's pool.
	pb.JobService_RunJob_FullMethodName: {Action: ActCreateJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.RunJobRequest).GetId())
	}},
	pb.JobService_UpdateJob_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		req := r.(*pb.UpdateJobRequest)
		t := jobTarget(req.GetJobId())
		// The new spec may move the job to another pool: both count.
		p := poolTarget(req.GetSpec().GetPool())
		t.Pools, t.Resource = p.Pools, t.Resource+", "+p.Resource
		return t
	}},
	pb.JobService_AbortUpdate_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return updateJob(r.(*pb.AbortUpdateRequest).GetUpdateId())
	}},
	pb.JobService_PromoteUpdate_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return updateJob(r.(*pb.PromoteUpdateRequest).GetUpdateId())
	}},
	pb.JobService_PauseUpdate_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return updateJob(r.(*pb.PauseUpdateRequest).GetUpdateId())
	}},
	pb.JobService_ResumeUpdate_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return updateJob(r.(*pb.ResumeUpdateRequest).GetUpdateId())
	}},
	pb.JobService_RollbackUpdate_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		return updateJob(r.(*pb.RollbackUpdateRequest).GetUpdateId())
	}},

	pb.TaskService_ListTasks_FullMethodName:   read(),
	pb.TaskService_GetTask_FullMethodName:     read(),
	pb.TaskService_GetTaskLogs_FullMethodName: read(),
	pb.TaskService_RestartTasks_FullMethodName: {Action: ActStopJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.RestartTasksRequest).GetJobId())
	}},
	pb.TaskService_StopTasks_FullMethodName: {Action: ActStopJob, Target: func(r any) Target {
		return jobTarget(r.(*pb.StopTasksRequest).GetJobId())
	}},

	pb.PoolService_CreatePool_FullMethodName: {Action: ActEditPool, Target: func(r any) Target {
		return poolTarget(r.(*pb.CreatePoolRequest).GetSpec().GetPath())
	}},
	pb.PoolService_UpdatePool_FullMethodName: {Action: ActEditPool, Target: func(r any) Target {
		return poolTarget(r.(*pb.UpdatePoolRequest).GetSpec().GetPath())
	}},
	pb.PoolService_DeletePool_FullMethodName: {Action: ActEditPool, Target: func(r any) Target {
		return poolTarget(r.(*pb.DeletePoolRequest).GetPath())
	}},
	pb.PoolService_ListPools_FullMethodName:      read(),
	pb.PoolService_GetPool_FullMethodName:        read(),
	pb.PoolService_GetPoolHistory_FullMethodName: read(),

	pb.HostService_ListHosts_FullMethodName: read(),
	pb.HostService_DrainHost_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "host " + r.(*pb.DrainHostRequest).GetHostId()}
	}},
	pb.HostService_UndrainHost_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "host " + r.(*pb.UndrainHostRequest).GetHostId()}
	}},
	pb.HostService_MarkHostDown_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "host " + r.(*pb.MarkHostDownRequest).GetHostId()}
	}},
	pb.HostService_SetHostPool_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "host " + r.(*pb.SetHostPoolRequest).GetHostId()}
	}},
	pb.HostService_ListHostPools_FullMethodName: read(),

	// A migration of one job is an update of the job; of a pool, an edit of
	// the pool. Steering a migration, and draining a cluster, are what
	// operators who manage hosts do.
	pb.JobService_StartMigration_FullMethodName: {Action: ActUpdateJob, Target: func(r any) Target {
		req := r.(*pb.StartMigrationRequest)
		if req.GetPool() != "" {
			t := poolTarget(req.GetPool())
			t.Resource += ", migration to " + req.GetToCluster()
			return Target{Pools: t.Pools, Resource: t.Resource}
		}
		t := jobTarget(req.GetJobId())
		t.Resource += ", migration to " + req.GetToCluster()
		return t
	}},
	pb.JobService_GetMigration_FullMethodName:   read(),
	pb.JobService_ListMigrations_FullMethodName: read(),
	pb.JobService_PauseMigration_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "migration " + r.(*pb.PauseMigrationRequest).GetMigrationId()}
	}},
	pb.JobService_ResumeMigration_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "migration " + r.(*pb.ResumeMigrationRequest).GetMigrationId()}
	}},
	pb.JobService_AbortMigration_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "migration " + r.(*pb.AbortMigrationRequest).GetMigrationId()}
	}},
	pb.JobService_RollbackMigration_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "migration " + r.(*pb.RollbackMigrationRequest).GetMigrationId()}
	}},
	pb.HostService_ListClusters_FullMethodName: read(),
	pb.HostService_GetCluster_FullMethodName:   read(),
	pb.HostService_DrainCluster_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "cluster " + r.(*pb.DrainClusterRequest).GetCluster()}
	}},
	pb.HostService_UndrainCluster_FullMethodName: {Action: ActManageHost, Target: func(r any) Target {
		return Target{Resource: "cluster " + r.(*pb.UndrainClusterRequest).GetCluster()}
	}},

	pb.RegionService_ListRegions_FullMethodName:      read(),
	pb.RegionService_GetRegionHistory_FullMethodName: read(),
	pb.EventService_Watch_FullMethodName:             read(),

	pb.FederationService_PutReplica_FullMethodName: {Action: ActReplicate, Target: func(r any) Target {
		return Target{Resource: "replica of job " + r.(*pb.PutReplicaRequest).GetReplica().GetJob().GetId()}
	}},
	pb.FederationService_ListReplicas_FullMethodName: read(),
	pb.FederationService_PlanFailover_FullMethodName: read(),
	pb.FederationService_StartDrill_FullMethodName: {Action: ActManageRegion, Target: func(r any) Target {
		return Target{Resource: "region " + r.(*pb.StartDrillRequest).GetRegion()}
	}},
	pb.FederationService_GetDrill_FullMethodName:   read(),
	pb.FederationService_ListDrills_FullMethodName: read(),
	pb.FederationService_IsolateRegion_FullMethodName: {Action: ActManageRegion, Target: func(r any) Target {
		return Target{Resource: "region " + r.(*pb.IsolateRegionRequest).GetRegion()}
	}},
	pb.FederationService_FailBack_FullMethodName: {Action: ActManageRegion, Target: func(r any) Target {
		return Target{Resource: "region " + r.(*pb.FailBackRequest).GetRegion()}
	}},

	pb.SystemService_GetVersion_FullMethodName: {Action: ActPublic},
	pb.AuthService_WhoAmI_FullMethodName:       {Action: ActSelf},
	pb.AuthService_CanI_FullMethodName:         {Action: ActSelf},
	pb.AuditService_ListAudit_FullMethodName:   {Action: ActReadAudit},
	pb.AuthService_GetPolicy_FullMethodName:    {Action: ActReadPolicy, Target: func(any) Target { return Target{Resource: "policy"} }},
	pb.AuthService_SetPolicy_FullMethodName:    {Action: ActSetPolicy, Target: func(any) Target { return Target{Resource: "policy"} }},

	// A backup hands over every job of the region: admins only.
	pb.SystemService_BackupStore_FullMethodName: {Action: ActBackupStore, Target: func(r any) Target {
		if region := r.(*pb.BackupStoreRequest).GetRegion(); region != "" {
			return Target{Resource: "store of region " + region}
		}
		return Target{Resource: "store of the receiving region"}
	}},
}

// mutating holds, by full method name, whether an RPC of the v1 API
// mutates: every method not marked idempotency_level = NO_SIDE_EFFECTS.
var mutating = methodClasses()

func methodClasses() map[string]bool {
	out := map[string]bool{}
	services := pb.File_peloton_v1_service_proto.Services()
	for i := 0; i < services.Len(); i++ {
		s := services.Get(i)
		for j := 0; j < s.Methods().Len(); j++ {
			m := s.Methods().Get(j)
			out[FullMethodName(m)] = !readOnly(m)
		}
	}
	return out
}

// FullMethodName is a method's gRPC name, "/peloton.v1.JobService/CreateJob".
func FullMethodName(m protoreflect.MethodDescriptor) string {
	return "/" + string(m.Parent().FullName()) + "/" + string(m.Name())
}

func readOnly(m protoreflect.MethodDescriptor) bool {
	opts, ok := m.Options().(*descriptorpb.MethodOptions)
	return ok && opts.GetIdempotencyLevel() == descriptorpb.MethodOptions_NO_SIDE_EFFECTS
}

// Mutating tells whether a method mutates, as its descriptor says; a
// method the API does not describe counts as mutating.
func Mutating(fullMethod string) bool {
	m, ok := mutating[fullMethod]
	return !ok || m
}

// Methods lists every RPC of the v1 API, by full method name.
func Methods() []protoreflect.MethodDescriptor {
	var out []protoreflect.MethodDescriptor
	services := pb.File_peloton_v1_service_proto.Services()
	for i := 0; i < services.Len(); i++ {
		s := services.Get(i)
		for j := 0; j < s.Methods().Len(); j++ {
			out = append(out, s.Methods().Get(j))
		}
	}
	return out
}
