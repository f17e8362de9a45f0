package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// completions runs the hidden command the shell completion scripts call
// and returns the candidates, without the directive line.
func completions(t *testing.T, s *server, args ...string) []string {
	t.Helper()
	r := s.CLI(append([]string{"__complete"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("__complete %v: exit %d\n%s", args, r.Code, r.Stderr)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if line != "" && !strings.HasPrefix(line, ":") {
			out = append(out, line)
		}
	}
	return out
}

// Shell completion asks the dev cluster for job ids (with their names),
// update ids, host ids and pool paths; the scripts for bash, zsh and fish
// come out of the binary; an unreachable server completes nothing, quietly.
func TestShellCompletion(t *testing.T) {
	s := startDev(t, t.TempDir(), "--hosts", "sim,hosts=2,duration=1h")
	dir := t.TempDir()
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "pool.yaml", "path: /team\nreservation: {cpu: 2, memMb: 2000}\n"))
	job := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "svc.yaml",
		"name: complete-me\ntype: service\npool: /team\ninstances: 2\ntask:\n  command: sim\n  resources: {cpu: 0.5, memMb: 10}\n")))
	s.MustCLI("job", "update", job, "-f", writeFile(t, dir, "svc2.yaml",
		"name: complete-me\ntype: service\npool: /team\ninstances: 3\ntask:\n  command: sim\n  resources: {cpu: 0.5, memMb: 10}\n"))

	has := func(list []string, want string) bool {
		for _, c := range list {
			if c == want {
				return true
			}
		}
		return false
	}
	if got := completions(t, s, "job", "get", ""); !has(got, job+"\tcomplete-me (running)") && !has(got, job+"\tcomplete-me (pending)") {
		t.Errorf("job get: %q, want %s with its name", got, job)
	}
	if got := completions(t, s, "task", "logs", job[:4]); len(got) != 1 || !strings.HasPrefix(got[0], job) {
		t.Errorf("task logs %s<TAB>: %q", job[:4], got)
	}
	if got := completions(t, s, "task", "get", job, ""); len(got) != 3 || !strings.HasPrefix(got[0], "0\t") {
		t.Errorf("task get %s <TAB>: %q, want its 3 instances", job, got)
	}
	if got := completions(t, s, "update", "get", ""); !has(got, job+".2\tlatest update of complete-me") {
		t.Errorf("update get: %q", got)
	}
	if got := completions(t, s, "update", "get", job+"."); len(got) != 1 || !strings.HasPrefix(got[0], job+".2\t") {
		t.Errorf("update get %s.<TAB>: %q", job, got)
	}
	if got := completions(t, s, "host", "drain", "sim/"); len(got) != 2 || !strings.HasPrefix(got[0], "sim/sim-0\t") {
		t.Errorf("host drain sim/<TAB>: %q", got)
	}
	if got := completions(t, s, "pool", "get", "/t"); len(got) != 1 || got[0] != "/team\t1 jobs" {
		t.Errorf("pool get /t<TAB>: %q", got)
	}
	if got := completions(t, s, "job", "list", "--pool", ""); !has(got, "/team\t1 jobs") || !has(got, "/\t0 jobs") {
		t.Errorf("job list --pool <TAB>: %q", got)
	}
	if got := completions(t, s, "job", "list", "-o", ""); strings.Join(got, ",") != "table,json,yaml" {
		t.Errorf("-o <TAB>: %q", got)
	}

	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out := s.MustCLI("completion", shell); !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: no script\n%.300s", shell, out)
		}
	}

	// Nothing listens there: no candidates, nothing printed, exit 0.
	r := s.CLI("--addr", "127.0.0.1:1", "__complete", "job", "get", "")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != ":4" {
		t.Errorf("unreachable server: exit %d, stdout %q", r.Code, r.Stdout)
	}
}

// Waiting tasks say why, through the binary: tasks held back by a pool's
// limit (and where they are in the queue) and tasks no host takes; job get
// sums them up. Amounts print to their unit everywhere, without residue.
func TestPendingTasksSayWhy(t *testing.T) {
	s := startDev(t, t.TempDir(), "--hosts", "sim,hosts=2,duration=1h")
	dir := t.TempDir()
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "a.yaml", "path: /a\nlimit: {cpu: 0.4}\n"))
	s.MustCLI("pool", "create", "-f", writeFile(t, dir, "b.yaml", "path: /b\n"))
	held := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "held.yaml",
		"name: held\npool: /a\npreemptible: true\ninstances: 10\ntask:\n  command: sim\n  resources: {cpu: 0.1, memMb: 10}\n")))
	edge := strings.TrimSpace(s.MustCLI("job", "create", "-f", writeFile(t, dir, "edge.yaml",
		"name: edge\npool: /b\npreemptible: true\ninstances: 2\ntask:\n  command: sim\n  resources: {cpu: 0.1, memMb: 10}\n  constraints: [{key: zone, op: equals, values: [x]}]\n")))

	waitFor(t, 20*time.Second, "both jobs waiting with reasons", func() bool {
		return field(s.MustCLI("job", "get", held), "Pending") == "6 pending: 6 waiting for pool /a's limit (cpu 0.4/0.4)" &&
			strings.HasPrefix(field(s.MustCLI("job", "get", edge), "Pending"), "2 pending: 2 not placed: 0/2 hosts: 2 zone")
	})
	msg := field(s.MustCLI("task", "get", held, "9"), "Message")
	if want := "not admitted: waiting for pool /a's limit (cpu 0.4/0.4), needs 0.1, behind a gang that waits for it; number 6 in pool /a's queue"; msg != want {
		t.Errorf("task get %s 9: %q\n                 want %q", held, msg, want)
	}
	if msg := field(s.MustCLI("task", "get", edge, "0"), "Message"); !strings.HasPrefix(msg, "not placed: 0/2 hosts") {
		t.Errorf("task get %s 0: %q", edge, msg)
	}
	var js struct {
		Status struct {
			Waiting []struct {
				Tasks  int    `json:"tasks"`
				Reason string `json:"reason"`
			} `json:"waiting"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(s.MustCLI("job", "get", held, "-o", "json")), &js); err != nil || len(js.Status.Waiting) != 1 || js.Status.Waiting[0].Tasks != 6 {
		t.Errorf("job get -o json: %v %+v", err, js.Status.Waiting)
	}

	for _, args := range [][]string{{"pool", "list"}, {"pool", "get", "/a"}, {"host", "list"}, {"job", "get", held}} {
		out := s.MustCLI(args...)
		if strings.Contains(out, "0000") || strings.Contains(out, "9999") {
			t.Errorf("peloton %s prints float residue:\n%s", strings.Join(args, " "), out)
		}
	}
	if out := s.MustCLI("pool", "get", "/a"); !strings.Contains(out, "0.4") {
		t.Errorf("pool get /a:\n%s", out)
	}
}
