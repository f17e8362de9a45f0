package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
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
	progress progress
	shares   func(map[string]policy.RegionShare)
	applied  *stateView // the gather whose shares were applied last
	ticks    int
}

// NewFailover returns the failover shell of a region; fence stops or
// resumes its shard's launches. The shard starts fenced: it launches only
// once it has checked with a peer that none of its jobs moved elsewhere.
func NewFailover(router *Router, fence func(bool), log *slog.Logger, interval time.Duration) *Failover {
	if interval <= 0 {
		interval = time.Second
	}
	router.log = func(msg string, args ...any) { log.Info(msg, args...) }
	router.warn = func(msg string, args ...any) { log.Warn(msg, args...) }
	f := &Failover{router: router, fence: fence, log: log, interval: interval, progress: newProgress()}
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
	local := r.dir.Local()
	var alive, failed []Region
	for _, reg := range r.dir.Regions() {
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
	others := len(r.dir.Regions()) - 1
	switch {
	case others <= 0:
		f.setFenced(false, "the only region")
	case len(alive) == 0:
		f.setFenced(true, "no other region is reachable")
	case !f.synced:
		if err := f.failback(ctx, alive); err != nil {
			r.reportError("failover", "failback check failed; staying fenced", err)
			break
		}
		f.synced = true
		f.setFenced(false, "checked with the federation")
	}
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

// failback stops local jobs that peers relocated while this region was
// gone, so that no job runs in two regions.
func (f *Failover) failback(ctx context.Context, alive []Region) error {
	r := f.router
	for _, reg := range alive {
		c, err := r.conn(reg)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
		resp, err := pb.NewFederationServiceClient(c).ListReplicas(cctx, &pb.ListReplicasRequest{OwnerRegion: r.dir.Local()})
		cancel()
		if err != nil {
			return fmt.Errorf("region %s: %w", reg.Name, err)
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
				return fmt.Errorf("stop relocated job %s: %w", id, err)
			}
			f.log.Info("stopped local copy of a relocated job", "job", id, "relocated_to", rep.GetRelocatedRegion(), "new_job", rep.GetRelocatedJobId())
		}
	}
	return nil
}

// relocate re-creates, in surviving regions, the relocatable jobs of a
// failed region that this region holds replicas of. Instances that already
// succeeded are not run again.
func (f *Failover) relocate(ctx context.Context, failed string) {
	r := f.router
	if r.replicas == nil {
		return
	}
	reps, err := r.replicas.list(ctx, failed)
	if err != nil {
		r.reportError("failover", "cannot load the replicas of a failed region", err, "failed_region", failed)
		return
	}
	for _, rep := range reps {
		if rep.GetRelocatedRegion() != "" {
			continue
		}
		spec := rep.GetJob().GetSpec()
		pol := defaultFailover(spec, false)
		if pol.GetMode() == pb.FailoverPolicy_MODE_NONE {
			continue
		}
		target, err := f.target(failed, pol)
		if err != nil {
			r.reportError("failover", "cannot relocate job", err, "job", rep.GetJob().GetId(), "from", failed)
			continue
		}
		remaining := spec.GetInstances() - uint32(len(rep.GetSucceeded()))
		newID := ""
		if remaining > 0 {
			ns := proto.Clone(spec).(*pb.JobSpec)
			ns.Region, ns.Instances = target, remaining
			daemonSpec(ns)
			if ns.Overrides, err = renumberOverrides(spec.GetOverrides(), rep.GetSucceeded()); err != nil {
				r.reportError("failover", "cannot relocate job", err, "job", rep.GetJob().GetId(), "from", failed)
				continue
			}
			if ns.MaxRunning > remaining {
				ns.MaxRunning = remaining
			}
			if ns.GangSize > 1 && remaining%ns.GangSize != 0 {
				ns.GangSize = 0 // a partial gang cannot be kept whole
			}
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[LabelRelocatedFrom] = rep.GetJob().GetId() + "@" + failed
			ns.Labels[LabelRelocatedBy] = r.dir.Local()
			// A replica is relocated once: the request id makes the create
			// safe to send again when recording the relocation failed, so
			// the next tick finds the job this one created.
			resp, err := r.CreateJob(context.WithoutCancel(ctx), &pb.CreateJobRequest{Spec: ns, RequestId: moveRequestID("relocate", rep.GetJob().GetId())})
			if err != nil {
				r.reportError("failover", "relocation failed", err, "job", rep.GetJob().GetId(), "to", target)
				continue
			}
			newID = resp.GetJob().GetId()
		}
		rep.RelocatedRegion, rep.RelocatedJobId, rep.RelocatedTime = target, newID, timestamppb.Now()
		if err := r.replicas.put(ctx, rep); err != nil {
			r.reportError("failover", "relocation not recorded", err, "job", rep.GetJob().GetId())
		}
		f.log.Info("job relocated", "job", rep.GetJob().GetId(), "from", failed, "to", target, "new_job", newID, "instances", remaining)
	}
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
