package security

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// Two regions of one CA and a third process with a certificate of another
// CA (and, worse, the federation's gossip key): a call forwarded between
// the two runs with the caller's identity in the owning region; the
// intruder is refused by the membership (so pool writes to every region
// still succeed), and can neither forward to them, nor call them as a
// region, nor receive their replicas.
func TestRegionsTalkMutualTLS(t *testing.T) {
	pki, toks := lab(t, []string{"east", "west"}, nil, []string{"root", "alice"}, `bindings:
  - {subjects: [root], role: admin}
  - {subjects: [alice], role: pool-owner, pools: [/a]}
`)
	other, otherToks := lab(t, []string{"rogue"}, nil, []string{"root"}, "bindings: [{subjects: [root], role: admin}]\n")
	key := testkit.GossipKey(t)
	gossip := func(name, ip string, gport int, join string) string {
		j := ""
		if join != "" {
			j = fmt.Sprintf("join: [%q], ", join)
		}
		return fmt.Sprintf("gossip: {node: %s-0, bind: \"%s:%d\", %sprofile: local, encryptKey: %q}\nhealth: {suspectAfter: 1s, failAfter: 3s, recoverAfter: 1s}\n",
			name, ip, gport, j, key)
	}
	ports := map[string]int{}
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		ports[ip] = testkit.FreePort(t, ip)
	}
	seed := fmt.Sprintf("127.0.0.1:%d", ports["127.0.0.1"])
	east := startRegion(t, pki, "east", fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t, "127.0.0.1")), gossip("east", "127.0.0.1", ports["127.0.0.1"], ""))
	west := startRegion(t, pki, "west", fmt.Sprintf("127.0.0.2:%d", testkit.FreePort(t, "127.0.0.2")), gossip("west", "127.0.0.2", ports["127.0.0.2"], seed))
	ctx := context.Background()
	root := caller{name: "root", token: toks["root"]}
	alice := caller{name: "alice", token: toks["alice"]}
	eastAdmin, westAdmin := east.conn(root), west.conn(root)
	testkit.WaitFor(t, 30*time.Second, "west alive at east", func() bool {
		resp, err := pb.NewRegionServiceClient(eastAdmin).ListRegions(ctx, &pb.ListRegionsRequest{})
		if err != nil {
			return false
		}
		for _, r := range resp.GetRegions() {
			if r.GetName() == "west" && r.GetHealth() == "alive" {
				return true
			}
		}
		return false
	})
	for _, p := range []string{"/a", "/a/x", "/b"} {
		if _, err := pb.NewPoolServiceClient(eastAdmin).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: p}}); err != nil {
			t.Fatalf("create pool %s: %v", p, err)
		}
	}
	// The intruder has the federation's gossip key but a certificate of
	// another CA: it joins (east is its seed) and gossips, and is never
	// admitted, so pool writes, which go to every region, keep working.
	rogue := startRegion(t, other, "rogue", fmt.Sprintf("127.0.0.3:%d", testkit.FreePort(t, "127.0.0.3")), gossip("rogue", "127.0.0.3", ports["127.0.0.3"], seed))
	testkit.WaitFor(t, 30*time.Second, "east to refuse the intruder (log)", func() bool {
		return strings.Contains(east.proc.Output(), "gossip member refused") && strings.Contains(east.proc.Output(), "rogue-0")
	})
	for i := range 6 {
		for _, r := range []*region{east, west} {
			resp, err := pb.NewRegionServiceClient(r.conn(root)).ListRegions(ctx, &pb.ListRegionsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, reg := range resp.GetRegions() {
				if reg.GetName() == "rogue" {
					t.Fatalf("%s lists the intruder's region: %v", r.name, resp.GetRegions())
				}
			}
		}
		if _, err := pb.NewPoolServiceClient(eastAdmin).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: fmt.Sprintf("/while-%d", i)}}); err != nil {
			t.Fatalf("a pool write while the intruder tries to join: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	spec := func(name, pool, region string) *pb.JobSpec {
		return &pb.JobSpec{Name: name, Pool: pool, Region: region, Instances: 1, Task: &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 1, MemMb: 10}}}
	}

	// Alice at east, for west: west runs it, as alice forwarded by east.
	var hdr metadata.MD
	created, err := pb.NewJobServiceClient(east.conn(alice)).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("fwd", "/a/x", "west")}, grpc.Header(&hdr))
	if err != nil {
		t.Fatalf("alice creating a job in /a/x pinned to west, at east: %v", err)
	}
	if got := hdr.Get("peloton-region"); len(got) == 0 || got[0] != "west" {
		t.Fatalf("served by %v, want west", got)
	}
	_, err = pb.NewJobServiceClient(east.conn(alice)).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("fwd-b", "/b", "west")})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("alice creating a job in /b pinned to west: %v, want PermissionDenied", err)
	}
	// Stopping it at east goes to west, again as alice.
	if _, err := pb.NewJobServiceClient(east.conn(alice)).StopJob(ctx, &pb.StopJobRequest{Id: created.GetJob().GetId()}); err != nil {
		t.Fatalf("alice stopping her job in west, at east: %v", err)
	}
	audit, err := pb.NewAuditServiceClient(westAdmin).ListAudit(ctx, &pb.ListAuditRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range audit.GetRecords() {
		lines = append(lines, fmt.Sprintf("%s %s %s by %s: %s", r.GetName(), r.GetMethod(), r.GetAction(), r.GetForwardedBy(), r.GetCode()))
	}
	for _, want := range []string{"alice token create-job by east: OK", "alice token stop-job by east: OK"} {
		if !strings.Contains(strings.Join(lines, "\n"), want) {
			t.Errorf("west's audit log lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}

	// A job of east's, replicated to a region that can hold it.
	job, err := pb.NewJobServiceClient(eastAdmin).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("replicated", "/a/x", "")})
	if err != nil {
		t.Fatal(err)
	}
	owner := job.GetJob().GetStatus().GetRegion()

	// The intruder cannot forward.
	rogueAdmin := rogue.conn(caller{name: "root", token: otherToks["root"]})
	// Nor does it admit them (their certificates are not of its CA): it
	// knows no route to them.
	if resp, err := pb.NewRegionServiceClient(rogueAdmin).ListRegions(ctx, &pb.ListRegionsRequest{}); err != nil || len(resp.GetRegions()) != 1 {
		t.Fatalf("the intruder's regions: %v, %v; want only its own", resp.GetRegions(), err)
	}
	for _, target := range []string{"east", "west"} {
		_, err := pb.NewJobServiceClient(rogueAdmin).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("intruder", "/a/x", target)})
		if err == nil {
			t.Errorf("the intruder forwarded a job to %s", target)
		} else {
			t.Logf("the intruder forwarding to %s: %s", target, status.Convert(err).Message())
		}
	}
	// Calling east directly with its region certificate, claiming root.
	intruderTLS, err := auth.ClientTLS(filepath.Join(pki, "ca.crt"), filepath.Join(other, "rogue.crt"), filepath.Join(other, "rogue.key"))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(east.addr, grpc.WithTransportCredentials(credentials.NewTLS(intruderTLS)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	claim := metadata.AppendToOutgoingContext(ctx, auth.CallerKey, auth.Identity{Name: "root", Method: auth.ByToken}.Encode())
	if _, err := pb.NewFederationServiceClient(cc).PutReplica(claim, &pb.PutReplicaRequest{Replica: &pb.Replica{Job: &pb.Job{Id: "x"}}}); err == nil {
		t.Error("east took a replica from a certificate of another CA")
	}
	// East's certificate forwarding for a region-less caller is still
	// only a region: it may not edit pools.
	asEast := west.conn(caller{name: "region east", cert: "east"})
	if _, err := pb.NewPoolServiceClient(asEast).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: "/regional"}}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("region east creating a pool on its own: %v, want PermissionDenied", err)
	}
	// The intruder holds no replica of the federation's jobs.
	time.Sleep(6 * time.Second) // replicas are pushed every few seconds
	reps, err := pb.NewFederationServiceClient(rogueAdmin).ListReplicas(ctx, &pb.ListReplicasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps.GetReplicas() {
		if r.GetJob().GetStatus().GetRegion() != "rogue" {
			t.Errorf("the intruder holds a replica of %s's job %s", r.GetJob().GetStatus().GetRegion(), r.GetJob().GetId())
		}
	}
	t.Logf("job %s owned by %s; replicas at the intruder: %d", job.GetJob().GetId(), owner, len(reps.GetReplicas()))
}
