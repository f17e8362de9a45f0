package security

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// raw makes an HTTPS request to r as c with exactly the headers given
// (a "Host" entry sets the request's Host); it returns the status, the
// headers and the body.
func (r *region) raw(c caller, method, path, body string, hdr map[string]string) (int, http.Header, string) {
	r.t.Helper()
	code, h, b, err := r.send(c, method, path, body, hdr, 5*time.Second)
	if code == 0 && err != nil {
		r.t.Fatal(err)
	}
	return code, h, b
}

// The attacks on the server's front door: a page of another site posting
// a form, a page on a rebound name, a pool owner whose bad body for
// another's pool was judged before it was refused, and the UI framed.
func TestTheGatewayIsNotAnOpenDoor(t *testing.T) {
	pki, toks := lab(t, []string{"east", "west"}, nil, []string{"root", "alice"}, `bindings:
  - {subjects: [root], role: admin}
  - {subjects: [alice], role: pool-owner, pools: [/a]}
`)
	west := startRegion(t, pki, "west", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "names: [peloton.example]\n")
	_, port, _ := net.SplitHostPort(west.addr)
	root := caller{name: "root", token: toks["root"]}
	alice := caller{name: "alice", token: toks["alice"]}
	ctx := context.Background()
	admin := west.conn(root)
	for _, p := range []string{"/a", "/b"} {
		if _, err := pb.NewPoolServiceClient(admin).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: p}}); err != nil {
			t.Fatalf("create pool %s: %v", p, err)
		}
	}
	job := `{"name":"csrf","pool":"/a","instances":1,"task":{"command":"sim","resources":{"cpu":1,"memMb":10}}}`

	// A page of another site, in a browser holding alice's credentials,
	// posting the kinds of bodies a browser sends without asking first.
	for _, c := range []struct {
		what string
		hdr  map[string]string
		want int
	}{
		{"a form", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 403},
		{"text/plain", map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain;charset=UTF-8"}, 403},
		{"JSON, cross-site", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403},
		{"a form without Origin", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"text/plain without Origin", map[string]string{"Content-Type": "text/plain"}, 415},
		{"a body without a type", map[string]string{}, 415},
	} {
		code, _, body := west.raw(alice, "POST", "/v1/jobs", job, c.hdr)
		if code != c.want {
			t.Errorf("%s creating a job: %d %s, want %d", c.what, code, body, c.want)
		}
	}
	list, err := pb.NewJobServiceClient(admin).ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetJobs()) != 0 {
		t.Fatalf("jobs exist after the cross-site posts: %v", list.GetJobs())
	}
	// The server's own page, and the CLI's way (no Origin), go on.
	if code, _, body := west.raw(alice, "POST", "/v1/jobs", job, map[string]string{"Origin": "https://" + west.addr, "Content-Type": "application/json"}); code != 200 {
		t.Errorf("the server's own page creating a job: %d %s", code, body)
	}

	// DNS rebinding: a name of the attacker's that resolves to the server.
	for host, want := range map[string]int{
		"evil.example:" + port:     421,
		"127.0.0.1:" + port:        200,
		"localhost:" + port:        200,
		"peloton.example:" + port:  200, // names in the config
		"west:" + port:             200, // the certificate's names
		"peloton.example.evil:443": 421,
	} {
		code, _, body := west.raw(root, "GET", "/v1/jobs", "", map[string]string{"Host": host})
		if code != want {
			t.Errorf("Host %s: %d %s, want %d", host, code, body, want)
		}
	}
	if code, _, _ := west.raw(caller{}, "GET", "/ui/", "", map[string]string{"Host": "evil.example:" + port}); code != 421 {
		t.Errorf("the UI on a rebound name: %d, want 421", code)
	}

	// A pool owner's bad body for a pool she does not own: refused for
	// the pool, and audited, before anything says what is wrong with it.
	bad := `{"name":"bad","pool":"/b","instances":0,"colour":"red","task":{"command":"sim","resources":{"cpu":-1,"memMb":10}}}`
	code, _, body := west.raw(alice, "POST", "/v1/jobs", bad, map[string]string{"Content-Type": "application/json"})
	if code != 403 || !strings.Contains(body, "pool /b") {
		t.Errorf("alice's bad spec for /b: %d %s, want 403 naming the pool", code, body)
	}
	if code, _, body := west.raw(caller{}, "POST", "/v1/jobs", bad, map[string]string{"Content-Type": "application/json"}); code != 401 {
		t.Errorf("nobody's bad spec: %d %s, want 401", code, body)
	}
	if code, _, body := west.raw(alice, "POST", "/v1/jobs", strings.Replace(bad, "/b", "/a", 1), map[string]string{"Content-Type": "application/json"}); code != 400 || !strings.Contains(body, "colour") {
		t.Errorf("alice's bad spec for /a: %d %s, want 400 naming the field", code, body)
	}
	audit, err := pb.NewAuditServiceClient(admin).ListAudit(ctx, &pb.ListAuditRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range audit.GetRecords() {
		lines = append(lines, fmt.Sprintf("%s %s %s %s: %s", r.GetName(), r.GetRpc(), r.GetAction(), r.GetResource(), r.GetCode()))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"alice /peloton.v1.JobService/CreateJob create-job pool /b, job name bad: PermissionDenied",
		"alice /peloton.v1.JobService/CreateJob create-job pool /a, job name bad: InvalidArgument",
		"- POST /v1/jobs  -: PermissionDenied", // the cross-site posts
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, got)
		}
	}

	// The UI: not to be framed, nothing but its own scripts and styles.
	for _, path := range []string{"/ui/", "/ui/jobs/x", "/ui/assets/app.js"} {
		_, h, _ := west.raw(caller{}, "GET", path, "", nil)
		for k, want := range map[string]string{
			"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'",
			"X-Frame-Options":         "DENY",
			"Referrer-Policy":         "no-referrer",
			"X-Content-Type-Options":  "nosniff",
		} {
			if !strings.Contains(h.Get(k), want) {
				t.Errorf("GET %s: %s is %q, want %q", path, k, h.Get(k), want)
			}
		}
	}
	if _, h, _ := west.raw(root, "GET", "/v1/jobs", "", nil); h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /v1/jobs: X-Content-Type-Options %q, want nosniff", h.Get("X-Content-Type-Options"))
	}
}

// A region's own identity (its certificate, no caller asserted) may only
// read, replicate, and create and stop the jobs it relocates: east's
// certificate cannot create a new job in west, nor stop west's jobs.
func TestARegionDoesOnlyWhatItsRoleSays(t *testing.T) {
	pki, toks := lab(t, []string{"east", "west"}, nil, []string{"root"}, "bindings: [{subjects: [root], role: admin}]\n")
	west := startRegion(t, pki, "west", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "")
	ctx := context.Background()
	admin := west.conn(caller{name: "root", token: toks["root"]})
	if _, err := pb.NewPoolServiceClient(admin).CreatePool(ctx, &pb.CreatePoolRequest{Spec: &pb.PoolSpec{Path: "/b"}}); err != nil {
		t.Fatal(err)
	}
	spec := func(name string) *pb.JobSpec {
		return &pb.JobSpec{Name: name, Pool: "/b", Instances: 1, Task: &pb.TaskSpec{Command: "sim", Resources: &pb.Resources{Cpu: 1, MemMb: 10}}}
	}
	theirs, err := pb.NewJobServiceClient(admin).CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("west-own")})
	if err != nil {
		t.Fatal(err)
	}
	id := theirs.GetJob().GetId()

	cc := west.conn(caller{name: "region east", cert: "east"})
	asEast := pb.NewJobServiceClient(cc)
	// A relocation names the job it relocates and who relocates it; west
	// knows no failed region, so even that is refused.
	relocation := spec("relocated")
	relocation.Region = "west"
	relocation.Labels = map[string]string{"peloton.relocated-from": "j1@north", "peloton.relocated-by": "east"}
	for _, c := range []struct {
		what string
		call func() error
	}{
		{"create a new job", func() error {
			_, err := asEast.CreateJob(ctx, &pb.CreateJobRequest{Spec: spec("intruded")})
			return err
		}},
		{"create a batch", func() error {
			_, err := asEast.CreateJobs(ctx, &pb.CreateJobsRequest{Jobs: []*pb.JobSpec{spec("intruded-1")}})
			return err
		}},
		{"relocate a job of a region that is not failed", func() error {
			_, err := asEast.CreateJob(ctx, &pb.CreateJobRequest{Spec: relocation, RequestId: "relocate:j1"})
			return err
		}},
		{"stop west's job", func() error {
			_, err := asEast.StopJob(ctx, &pb.StopJobRequest{Id: id})
			return err
		}},
		{"stop west's tasks", func() error {
			_, err := pb.NewTaskServiceClient(cc).StopTasks(ctx, &pb.StopTasksRequest{JobId: id})
			return err
		}},
		{"delete west's job", func() error {
			_, err := asEast.DeleteJob(ctx, &pb.DeleteJobRequest{Id: id})
			return err
		}},
	} {
		err := c.call()
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("region east's certificate: %s: %v, want PermissionDenied", c.what, err)
		} else {
			t.Logf("%s: %s", c.what, status.Convert(err).Message())
		}
	}
	// It still reads.
	if _, err := asEast.GetJob(ctx, &pb.GetJobRequest{Id: id}); err != nil {
		t.Errorf("region east reading west's job: %v", err)
	}
	list, err := pb.NewJobServiceClient(admin).ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(list.GetJobs())
	if len(list.GetJobs()) != 1 {
		t.Errorf("west's jobs after east's attempts: %s, want only its own", raw)
	}
	got, err := pb.NewJobServiceClient(admin).GetJob(ctx, &pb.GetJobRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.GetJob().GetStatus().GetState(); s == pb.JobState_JOB_STATE_KILLED {
		t.Errorf("west's job was stopped: %v", s)
	}
}
