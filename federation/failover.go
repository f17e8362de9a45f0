package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/federation/policy"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// LabelRelocatedFrom marks a job re-created from a failed region's replica:
// "<job id>@<region>".
const LabelRelocatedFrom = "peloton.relocated-from"

// Failover is the shell that keeps a region's part of the federation's
// promises: it relocates the jobs of failed regions it holds replicas of,
// keeps its own jobs' replicas up to date, fences its shard while it cannot
// see the rest of the federation, and on coming back stops its copies of
// jobs that were relocated meanwhile.
type Failover struct {
	router   *Router
	fence    func(bool)
	log      *slog.Logger
	interval time.Duration

	fenced   bool
	synced   bool // failback check done since the last fence
	allAlive bool // every other region was alive at the last failback check
	// held: why the region stays fenced though it sees others alive;
	// logged when it changes.
	held     heldBy
	progress progress
	shares   func(map[string]policy.RegionShare)
	applied  *stateView // the gather whose shares were applied last
	ticks    int
	// alone counts the ticks that saw no other region while the
	// directory was still joining its peers (see joinWait).
	alone int
	// settled: failed regions this region relocates for, with the tick at
	// which nothing of theirs was left to relocate.
	settled map[string]int
}

// Joiner is a Directory that may still be joining its federation.
// Joining is true while it was given peers to join and none answered yet.
type Joiner interface {
	Joining() bool
}

// joinWait is how many ticks a region that sees no other region, while
// its directory is still joining its peers, stays fenced before it takes
// itself for the only region. A region restarted after its work was
// relocated must not launch that work again before it hears from the
// others; one whose peers are all gone still starts, this much later.
const joinWait = 30

// settledRecheck is how many ticks a failed region whose jobs were all
// relocated waits before its replicas are read again everywhere.
const settledRecheck = 10

// NewFailover returns the failover shell of a region; fence stops or
// resumes its shard's launches. The shard starts fenced: it launches only
// once it has checked with a peer that none of its jobs moved elsewhere.
func NewFailover(router *Router, fence func(bool), log *slog.Logger, interval time.Duration) *Failover {
	if interval <= 0 {
		interval = time.Second
	}
	router.log = func(msg string, args ...any) { log.Info(msg, args...) }
	router.warn = func(msg string, args ...any) { log.Warn(msg, args...) }
	f := &Failover{router: router, fence: fence, log: log, interval: interval, progress: newProgress(), settled: map[string]int{}}
	f.setFenced(true, "starting: checking with the federation first")
	return f
}

func (f *Failover) setFenced(v bool, why string) {
	if f.fenced == v {
		return
	}
	f.fenced = v
	f.fence(v)
	if v {
		f.synced = false
		f.log.Warn("region fenced: launches stopped", "why", why)
	} else {
		f.log.Info("region unfenced: launches resume", "why", why)
	}
}

// Run ticks until ctx ends, and follows the local shard's events to
// know which jobs changed.
func (f *Failover) Run(ctx context.Context) {
	done := make(chan struct{})
	defer func() { <-done }()
	go func() {
		defer close(done)
		f.followChanges(ctx)
	}()
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		f.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick does one round of failover duties.
func (f *Failover) Tick(ctx context.Context) {
	r := f.router
	alive, failed := othersByHealth(r.dir.Local(), r.dir.Regions())
	for name := range f.settled {
		if !slices.ContainsFunc(failed, func(reg Region) bool { return reg.Name == name }) {
			delete(f.settled, name) // back, or gone: read afresh when it fails again
		}
	}
	others := len(r.dir.Regions()) - 1
	f.checkFence(ctx, alive, others)
	if !f.fenced {
		for _, reg := range failed {
			f.relocate(ctx, reg.Name)
		}
	}
	f.ticks++
	if !f.fenced && f.ticks%5 == 0 {
		f.syncProgress(ctx)
	}
	if !f.fenced && f.shares != nil && others > 0 {
		f.globalPass(ctx)
	}
}

// othersByHealth returns the regions other than local that are alive and
// those that failed.
func othersByHealth(local string, regions []Region) (alive, failed []Region) {
	for _, reg := range regions {
		if reg.Name == local {
			continue
		}
		switch reg.Health {
		case "alive":
			alive = append(alive, reg)
		case "failed":
			failed = append(failed, reg)
		}
	}
	return alive, failed
}

// checkFence fences or unfences the region from what it sees of the
// others: alive of them, others in all. A region fenced since it started
// or was cut off unfences once a failback check finds every region it
// sees alive holding it alive and none relocating its jobs.
func (f *Failover) checkFence(ctx context.Context, alive []Region, others int) {
	switch {
	case others <= 0 && f.joining():
		// Stays fenced (it starts fenced): the others may hold its work.
	case others <= 0:
		f.setFenced(false, "the only region")
	case len(alive) == 0:
		f.setFenced(true, "no other region is reachable")
	case !f.synced:
		held, err := f.failback(ctx, alive)
		if err != nil {
			f.router.reportError("failover", "failback check failed; staying fenced", err)
			return
		}
		if held.region != "" {
			f.hold(held)
			return
		}
		f.synced, f.held = true, heldBy{}
		f.allAlive = len(alive) == others
		f.setFenced(false, "checked with the federation")
	default:
		f.recheck(ctx, alive, others)
	}
}

// joining reports whether the region should wait for its directory to
// join the federation before it takes itself for the only region, and
// counts the wait.
func (f *Failover) joining() bool {
	j, ok := f.router.dir.(Joiner)
	if !ok || !j.Joining() || f.alone >= joinWait {
		return false
	}
	if f.alone == 0 {
		f.log.Warn("no other region seen yet: staying fenced while joining the federation", "wait_ticks", joinWait)
	}
	f.alone++
	return true
}

// SetShareSink makes the failover shell run the global entitlement pass:
// each pool's reservation and limit are split among the regions by their
// demand and capacity, and apply receives this region's shares. The pass
// runs as often as the router's gathers are due (every 3 s, or ten times
// the last gather's duration when that is longer), and applies the shares
// of every new gather, routing's included.
func (f *Failover) SetShareSink(apply func(map[string]policy.RegionShare)) { f.shares = apply }

func (f *Failover) globalPass(ctx context.Context) {
	r := f.router
	v := r.stateView(ctx, true)
	if v == nil || v == f.applied {
		return // no new gather: it is not due yet
	}
	f.applied = v
	for _, region := range sortedKeys(v.errs) {
		if ctx.Err() == nil {
			r.reportError("global", "global pass: a region's state could not be read; it counts as suspect", v.errs[region], "state_region", region)
		}
	}
	if len(v.pools) == 0 {
		return
	}
	f.shares(v.shares[r.dir.Local()])
}

// heldBy is a region that does not hold this one alive yet, and how it
// holds it; the zero value is none.
type heldBy struct {
	region, health string
	relocating     bool // relocating this region's jobs
}

func (h heldBy) String() string {
	if h.relocating {
		return "region " + h.region + " is relocating this region's jobs"
	}
	return "region " + h.region + " holds this region " + h.health
}

// mayRelocate says whether the region may relocate this one's jobs now
// (a suspect region's jobs stay; a lossy link makes a region suspect for
// a moment).
func (h heldBy) mayRelocate() bool { return h.relocating || h.health == "failed" }

// failback stops local jobs that peers relocated while this region was
// gone, so that no job runs in two regions. It asks every region it sees
// alive for the relocations they hold of its jobs, and how they see it:
// held is the first that does not hold this region alive or is
// relocating its jobs, zero when none (a region that does not know this
// one holds it nothing). A region that still holds this one failed may
// relocate any of its jobs, a new one included, so launching before
// then would run that job twice. What was relocated is stopped whatever
// held says.
func (f *Failover) failback(ctx context.Context, alive []Region) (held heldBy, err error) {
	r := f.router
	for _, reg := range alive {
		c, err := r.conn(reg)
		if err != nil {
			return heldBy{}, err
		}
		cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
		resp, err := pb.NewFederationServiceClient(c).ListReplicas(cctx, &pb.ListReplicasRequest{OwnerRegion: r.dir.Local(), RelocatedOnly: true})
		cancel()
		if err != nil {
			return heldBy{}, fmt.Errorf("region %s: %w", reg.Name, err)
		}
		if h := resp.GetOwnerHealth(); held.region == "" && (resp.GetRelocating() || h != "" && h != "alive") {
			held = heldBy{region: reg.Name, health: h, relocating: resp.GetRelocating()}
		}
		for _, rep := range resp.GetReplicas() {
			if rep.GetRelocatedRegion() == "" {
				continue
			}
			id := rep.GetJob().GetId()
			got, err := pb.NewJobServiceClient(r.local()).GetJob(ctx, &pb.GetJobRequest{Id: id})
			if err != nil {
				continue
			}
			switch got.GetJob().GetStatus().GetState() {
			case pb.JobState_JOB_STATE_SUCCEEDED, pb.JobState_JOB_STATE_FAILED, pb.JobState_JOB_STATE_KILLED:
				continue
			}
			if _, err := pb.NewJobServiceClient(r.local()).StopJob(ctx, &pb.StopJobRequest{Id: id}); err != nil {
				return heldBy{}, fmt.Errorf("stop relocated job %s: %w", id, err)
			}
			f.log.Info("stopped local copy of a relocated job", "job", id, "relocated_to", rep.GetRelocatedRegion(), "new_job", rep.GetRelocatedJobId())
		}
	}
	return held, nil
}

// hold keeps the region fenced while h does not hold it alive, logged
// when it changes.
func (f *Failover) hold(h heldBy) {
	f.setFenced(true, h.String())
	if h != f.held {
		f.held = h
		f.log.Warn("region stays fenced: another region does not hold it alive yet", "why", h.String())
	}
}

// recheckEvery is how many ticks apart the failback check runs again
// once the region is unfenced.
const recheckEvery = 5

// recheck runs the failback check again every recheckEvery ticks, and at
// once when every region is alive again after one was not: another region
// may hold this one failed though this one sees it alive (views of a cut
// differ: memberlist's Lifeguard slows the probes of a member whose own
// probes fail), and relocate its jobs; a first check can run in the middle
// of a relocation pass, right after a cut heals. It stops what moved
// meanwhile, and fences the region again while a region holds it failed
// or is relocating its jobs (suspect is not enough: a lossy link makes a
// region suspect for a moment), until a check finds every region holding
// it alive.
func (f *Failover) recheck(ctx context.Context, alive []Region, others int) {
	all := len(alive) == others
	if !all {
		f.allAlive = false
	}
	if f.ticks%recheckEvery != 0 && !(all && !f.allAlive) {
		return
	}
	held, err := f.failback(ctx, alive)
	if err != nil {
		f.router.reportError("failover", "failback check failed; it runs again", err)
		return
	}
	f.allAlive = all
	if held.mayRelocate() {
		f.hold(held)
	}
}

// relocate re-creates, in surviving regions, the relocatable jobs of a
// failed region, when this region is their relocator (relocatorOf): from
// the newest copy of each job's replica that it and the regions it does
// not hold failed keep. Every one of those regions must answer first, so
// that a relocation one of them recorded is never made again; the
// relocation is then recorded in every copy read (spread), this region's
// included, adopted when another region made it. Instances that already
// succeeded are not run again.
func (f *Failover) relocate(ctx context.Context, failed string) {
	r := f.router
	if !f.relocatesFor(failed) {
		return
	}
	if !r.relocating.begin(failed, r.health) {
		return // back meanwhile
	}
	defer r.relocating.end(failed)
	held, errs := r.replicasHeld(ctx, failed)
	if len(errs) > 0 {
		for _, region := range sortedKeys(errs) {
			r.reportError("failover", "the replicas a region holds could not be read; relocation waits for it", errs[region], "failed_region", failed, "holder", region)
		}
		return
	}
	local := r.dir.Local()
	lacking := lackingRelocation(local, held)
	reps, missing := f.relocatable(ctx, failed, held, lacking)
	if len(reps) == 0 && missing == 0 {
		f.settled[failed] = f.ticks
	} else {
		delete(f.settled, failed)
	}
	for _, rep := range reps {
		f.relocateJob(ctx, failed, rep, lacking[rep.GetJob().GetId()])
	}
}

// relocatesFor reports whether this region relocates the jobs of failed
// now: it is their relocator, and they were not found all relocated
// less than settledRecheck ticks ago.
func (f *Failover) relocatesFor(failed string) bool {
	r := f.router
	if r.replicas == nil {
		return false
	}
	local := r.dir.Local()
	if by := relocatorOf(failed, local, r.dir.Regions()); by != local {
		return false // that region relocates, from this one's replicas too
	}
	last, ok := f.settled[failed]
	return !ok || f.ticks-last >= settledRecheck
}

// lackingRelocation returns, per job, the regions whose copy of its
// replica lacks its relocation: local, and every other holder of a copy
// without one.
func lackingRelocation(local string, held []heldReplica) map[string][]string {
	lacking := map[string][]string{}
	for _, hr := range held {
		id := hr.rep.GetJob().GetId()
		if _, ok := lacking[id]; !ok {
			lacking[id] = []string{local}
		}
		if hr.rep.GetRelocatedRegion() != "" {
			lacking[id] = slices.DeleteFunc(lacking[id], func(n string) bool { return n == hr.holder })
		} else if hr.holder != local {
			lacking[id] = append(lacking[id], hr.holder)
		}
	}
	return lacking
}

// relocatable goes through the newest copy of each job's replica: a
// relocation already made is recorded where it lacks (spread), and a job
// not relocated yet whose failover mode is not NONE is returned, to
// relocate. missing counts the regions the recorded relocations lacked.
func (f *Failover) relocatable(ctx context.Context, failed string, held []heldReplica, lacking map[string][]string) (reps []*pb.Replica, missing int) {
	local := f.router.dir.Local()
	for _, hr := range newestReplicas(local, held) {
		rep := hr.rep
		id := rep.GetJob().GetId()
		if rep.GetRelocatedRegion() != "" {
			if slices.Contains(lacking[id], local) {
				f.log.Info("relocation made by another region recorded", "job", id, "from", failed, "by", hr.holder, "to", rep.GetRelocatedRegion())
			}
			missing += f.spread(ctx, rep, lacking[id])
		} else if defaultFailover(rep.GetJob().GetSpec(), false).GetMode() != pb.FailoverPolicy_MODE_NONE {
			reps = append(reps, rep)
		}
	}
	return reps, missing
}

// relocateJob re-creates a failed region's job in its failover target,
// with the instances that have not succeeded, and records the relocation
// in the replica and in the regions of to. A job none of whose instances
// is left is recorded relocated without a new job.
func (f *Failover) relocateJob(ctx context.Context, failed string, rep *pb.Replica, to []string) {
	r := f.router
	spec := rep.GetJob().GetSpec()
	target, err := f.target(failed, defaultFailover(spec, false))
	if err != nil {
		r.reportError("failover", "cannot relocate job", err, "job", rep.GetJob().GetId(), "from", failed)
		return
	}
	remaining := spec.GetInstances() - uint32(len(rep.GetSucceeded()))
	newID := ""
	if remaining > 0 {
		ns, err := relocatedSpec(rep, failed, target, r.dir.Local(), remaining)
		if err != nil {
			r.reportError("failover", "cannot relocate job", err, "job", rep.GetJob().GetId(), "from", failed)
			return
		}
		// A replica is relocated once: the request id makes the create
		// safe to send again when recording the relocation failed, so
		// the next tick finds the job this one created.
		resp, err := r.CreateJob(context.WithoutCancel(ctx), &pb.CreateJobRequest{Spec: ns, RequestId: moveRequestID("relocate", rep.GetJob().GetId())})
		if err != nil {
			r.reportError("failover", "relocation failed", err, "job", rep.GetJob().GetId(), "to", target)
			return
		}
		newID = resp.GetJob().GetId()
	}
	rep.RelocatedRegion, rep.RelocatedJobId, rep.RelocatedTime = target, newID, timestamppb.Now()
	f.log.Info("job relocated", "job", rep.GetJob().GetId(), "from", failed, "to", target, "new_job", newID, "instances", remaining)
	f.spread(ctx, rep, to)
}

// relocatedSpec is the spec of a replica's job re-created in target by
// region by: its remaining instances, renumbered past the ones that
// succeeded, max_running no more than them, its gang given up when the
// remaining instances do not make whole gangs, and labelled with where it
// came from and who moved it.
func relocatedSpec(rep *pb.Replica, failed, target, by string, remaining uint32) (*pb.JobSpec, error) {
	spec := rep.GetJob().GetSpec()
	ns := proto.Clone(spec).(*pb.JobSpec)
	ns.Region, ns.Instances = target, remaining
	daemonSpec(ns)
	var err error
	if ns.Overrides, err = renumberOverrides(spec.GetOverrides(), rep.GetSucceeded()); err != nil {
		return nil, err
	}
	ns.MaxRunning = min(ns.MaxRunning, remaining)
	if ns.GangSize > 1 && remaining%ns.GangSize != 0 {
		ns.GangSize = 0 // a partial gang cannot be kept whole
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[LabelRelocatedFrom] = rep.GetJob().GetId() + "@" + failed
	ns.Labels[LabelRelocatedBy] = by
	return ns, nil
}

// spread records a relocation in the regions of to: this one and the
// other holders of a copy of the job's replica that lack it. The failed
// region, once back, finds it with whichever holder it checks (the one it
// pushed its replicas to last among them), and a later relocator finds
// it in every copy it reads, so no copy is relocated again. It returns
// how many regions lacked it; one that could not be told is told at the
// next tick.
func (f *Failover) spread(ctx context.Context, rep *pb.Replica, to []string) int {
	r := f.router
	for _, name := range to {
		if err := r.putReplicaAt(ctx, name, proto.Clone(rep).(*pb.Replica)); err != nil {
			r.reportError("failover", "relocation not recorded", err, "job", rep.GetJob().GetId(), "holder", name)
		}
	}
	return len(to)
}

// moveRequestID is the request id of the create that moves job to another
// region (kind "relocate" or "failback"): the same on every attempt, and
// within the limits of request ids whatever the job id (a longer or
// unusual id is hashed).
func moveRequestID(kind, job string) string {
	id := kind + ":" + job
	if pb.CheckRequestID(id) != "" {
		sum := sha256.Sum256([]byte(job))
		id = kind + ":" + hex.EncodeToString(sum[:])
	}
	return id
}

// target picks where a failed region's job goes: a live region its policy
// allows, the local one when allowed (no forwarding needed), else by name.
func (f *Failover) target(failed string, pol *pb.FailoverPolicy) (string, error) {
	r := f.router
	allowed := map[string]bool{}
	for _, name := range pol.GetRegions() {
		allowed[name] = true
	}
	var names []string
	for _, reg := range r.dir.Regions() {
		if reg.Name == failed || reg.Health != "alive" && reg.Name != r.dir.Local() {
			continue
		}
		if pol.GetMode() == pb.FailoverPolicy_MODE_REGIONS && !allowed[reg.Name] {
			continue
		}
		names = append(names, reg.Name)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no live region allowed by its failover policy")
	}
	sort.Strings(names)
	for _, n := range names {
		if n == r.dir.Local() {
			return n, nil
		}
	}
	return names[0], nil
}

// relocatorOf is the one region that relocates the jobs of the failed
// region, in the view regions of region local: the first by name after the
// failed one, wrapping around, of local and the regions it does not hold
// failed (where the owner puts its replicas while all are alive, so each
// region's jobs have their own relocator). Regions that see each other
// alike pick the same one, whichever of them hold its replicas.
func relocatorOf(failed, local string, regions []Region) string {
	names := []string{local}
	for _, reg := range regions {
		if reg.Name != failed && reg.Name != local && reg.Health != "failed" && reg.Addr != "" {
			names = append(names, reg.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if n > failed {
			return n
		}
	}
	return names[0]
}

// newestReplicas merges the copies of a region's replicas that several
// regions hold into one per job, ordered by job id: a copy that records a
// relocation wins (the job moved: never again), else the copy with the
// owner's latest progress (config version, then succeeded instances); on
// a tie the local copy, then the first holder by name. A copy without the
// failover policy (pushed by the owner's progress sync to a holder that
// never had the job's create) takes it from another copy.
func newestReplicas(local string, held []heldReplica) []heldReplica {
	rank := func(hr heldReplica) []uint64 {
		rep := hr.rep
		relocated, isLocal := uint64(0), uint64(0)
		if rep.GetRelocatedRegion() != "" {
			relocated = 1
		}
		if hr.holder == local {
			isLocal = 1
		}
		return []uint64{relocated, rep.GetJob().GetConfigVersion(), uint64(len(rep.GetSucceeded())), isLocal}
	}
	best := map[string]heldReplica{}
	policies := map[string]*pb.FailoverPolicy{}
	for _, hr := range held {
		id := hr.rep.GetJob().GetId()
		if p := hr.rep.GetJob().GetSpec().GetFailover(); p != nil && policies[id] == nil {
			policies[id] = p
		}
		cur, ok := best[id]
		if !ok || slices.Compare(rank(hr), rank(cur)) > 0 || slices.Compare(rank(hr), rank(cur)) == 0 && hr.holder < cur.holder {
			best[id] = hr
		}
	}
	out := make([]heldReplica, 0, len(best))
	for _, id := range sortedKeys(best) {
		hr := best[id]
		if spec := hr.rep.GetJob().GetSpec(); spec != nil && spec.Failover == nil && policies[id] != nil {
			hr.rep = proto.Clone(hr.rep).(*pb.Replica)
			hr.rep.Job.Spec.Failover = policies[id]
		}
		out = append(out, hr)
	}
	return out
}
