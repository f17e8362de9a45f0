package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peloton-federated/peloton/tests/testkit"
)

// failoverLoad submits small jobs to a region of several members the way a
// client that knows them all does: each create is a CreateJobs call with a
// request id of its own (POST /v1/jobs:batchCreate), and an attempt that
// fails in a way a client retries (503 / Unavailable, 429, a connection
// refused or reset, no answer within attemptTimeout) is sent again, with
// the same request id, to the next member, until it is acknowledged or
// createDeadline passes. Any other answer ends the create as failed: a
// client would show it to its user.
type failoverLoad struct {
	members []*member
	name    string // the jobs' name
	tasks   int    // instances of each job
	begin   time.Time

	mu      sync.Mutex
	creates []failoverCreate
	// reads, when not nil, are the reads of acknowledged jobs each client
	// makes after each create, retried the same way.
	reads   []failoverCreate
	retried map[string]int // attempts sent again, by what they got
	next    int            // the member the next create tries first
}

// failoverCreate is one create as its client saw it.
type failoverCreate struct {
	at, took  time.Duration // since the load began
	requestID string
	job       string // the acknowledged job; empty when it failed
	attempts  int
	failure   string // why it failed: an answer not retried, or the deadline
}

const (
	attemptTimeout = 10 * time.Second
	createDeadline = 2 * time.Minute
)

func newFailoverLoad(members []*member, name string, tasks int) *failoverLoad {
	return &failoverLoad{members: members, name: name, tasks: tasks, begin: time.Now(), retried: map[string]int{}}
}

// send makes one HTTP call to m; retry names why it may be sent again
// ("" when it may not), err says what went wrong.
func send(m *member, method, path, body string) (data []byte, retry string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, "http://"+m.addr+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var op *net.OpError
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return nil, "no answer in time", err
		case errors.As(err, &op), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, "connection refused or reset", err
		}
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(resp.Body)
	if err != nil {
		return nil, "connection refused or reset", err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return data, "", nil
	case http.StatusServiceUnavailable:
		return nil, "503 Unavailable", fmt.Errorf("503 %s", data)
	case http.StatusTooManyRequests:
		return nil, "429 shed", fmt.Errorf("429 %s", data)
	}
	return nil, "", fmt.Errorf("%d %s", resp.StatusCode, data)
}

// createAttempt sends one CreateJobs attempt to m.
func (l *failoverLoad) createAttempt(m *member, requestID string) (job, retry string, err error) {
	body := fmt.Sprintf(`{"requestId":%q,"jobs":[{"name":%q,"instances":%d,"preemptible":true,"task":{"command":"sim","resources":{"cpu":0.1,"memMb":1}}}]}`,
		requestID, l.name, l.tasks)
	data, retry, err := send(m, "POST", "/v1/jobs:batchCreate", body)
	if err != nil {
		return "", retry, err
	}
	var out struct {
		Results []struct {
			JobID   string `json:"jobId"`
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Results) != 1 {
		return "", "", fmt.Errorf("200 without one result: %s", data)
	}
	r := out.Results[0]
	switch {
	case r.Code == 0 && r.JobID != "":
		return r.JobID, "", nil
	case r.Code == 14: // UNAVAILABLE: the spec's region could not store it
		return "", "503 Unavailable", fmt.Errorf("result code 14: %s", r.Message)
	}
	return "", "", fmt.Errorf("result code %d: %s", r.Code, r.Message)
}

// readAttempt reads job at m: it must be there.
func readAttempt(m *member, job string) (string, string, error) {
	var out struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	data, retry, err := send(m, "GET", "/v1/jobs/"+job, "")
	if err == nil && (json.Unmarshal(data, &out) != nil || out.Job.ID != job) {
		err = fmt.Errorf("200 without job %s: %s", job, data)
	}
	return job, retry, err
}

// call runs one call to its end: attempt is sent to one member after
// another until it succeeds, fails in a way not retried, or
// createDeadline passes.
func (l *failoverLoad) call(id string, attempt func(m *member) (job, retry string, err error)) failoverCreate {
	start := time.Now()
	c := failoverCreate{at: start.Sub(l.begin), requestID: id}
	l.mu.Lock()
	first := l.next
	l.next = (l.next + 1) % len(l.members)
	l.mu.Unlock()
	backoff := 100 * time.Millisecond
	for {
		m := l.members[(first+c.attempts)%len(l.members)]
		c.attempts++
		job, retry, err := attempt(m)
		if err == nil {
			c.job = job
			break
		}
		if retry == "" {
			c.failure = fmt.Sprintf("%s answered: %v", m.name, err)
			break
		}
		l.mu.Lock()
		l.retried[retry]++
		l.mu.Unlock()
		if time.Since(start) > createDeadline {
			c.failure = fmt.Sprintf("not done within %v (last: %s %v)", createDeadline, m.name, err)
			break
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
	c.took = time.Since(start)
	return c
}

// run creates with clients concurrent clients, each every interval, until
// ctx ends.
func (l *failoverLoad) run(ctx context.Context, clients int, interval time.Duration) {
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				rid := fmt.Sprintf("%s-%d-%d-%d", l.name, l.begin.UnixNano(), i, n)
				c := l.call(rid, func(m *member) (string, string, error) { return l.createAttempt(m, rid) })
				l.mu.Lock()
				l.creates = append(l.creates, c)
				var read string
				if l.reads != nil {
					read = l.creates[rand.IntN(len(l.creates))].job // "" for a failed create: no read
				}
				l.mu.Unlock()
				if read != "" {
					r := l.call(read, func(m *member) (string, string, error) { return readAttempt(m, read) })
					l.mu.Lock()
					l.reads = append(l.reads, r)
					l.mu.Unlock()
				}
				select {
				case <-ctx.Done():
				case <-time.After(interval):
				}
			}
		}()
	}
	wg.Wait()
}

// start runs the load until the returned function is called; that
// function waits for the creates in flight. The test's cleanups stop it too.
func (l *failoverLoad) start(t *testing.T, clients int, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.run(ctx, clients, interval)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// now is the time since the load began.
func (l *failoverLoad) now() time.Duration { return time.Since(l.begin) }

// firstAckAfter is when the first create that started at or after d and
// was acknowledged was answered, since the load began; -1 if none yet.
func (l *failoverLoad) firstAckAfter(d time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := time.Duration(-1)
	for _, c := range l.creates {
		if c.job != "" && c.at >= d && (first < 0 || c.at+c.took < first) {
			first = c.at + c.took
		}
	}
	return first
}

// failoverSummary is what the load's clients saw.
type failoverSummary struct {
	acked    []string // job ids, sorted
	failed   []string // why each failed create or read failed
	retried  map[string]int
	attempts int
	slowest  time.Duration // of the acknowledged creates
	dupIDs   int           // job ids acknowledged to two creates
	reads    int
}

func (l *failoverLoad) summary() failoverSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := failoverSummary{retried: map[string]int{}}
	seen := map[string]bool{}
	for _, c := range l.creates {
		s.attempts += c.attempts
		if c.job == "" {
			s.failed = append(s.failed, fmt.Sprintf("create at %.1fs after %d attempts: %s", c.at.Seconds(), c.attempts, c.failure))
			continue
		}
		if seen[c.job] {
			s.dupIDs++
		}
		seen[c.job] = true
		s.acked = append(s.acked, c.job)
		s.slowest = max(s.slowest, c.took)
	}
	for _, r := range l.reads {
		s.reads++
		if r.job == "" || r.failure != "" {
			s.failed = append(s.failed, fmt.Sprintf("read of %s at %.1fs after %d attempts: %s", r.requestID, r.at.Seconds(), r.attempts, r.failure))
		}
	}
	for k, v := range l.retried {
		s.retried[k] = v
	}
	sort.Strings(s.acked)
	return s
}

// retriedString lists the retried attempts by cause.
func (s failoverSummary) retriedString() string {
	if len(s.retried) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range s.retried {
		parts = append(parts, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// verifyJobs checks the jobs of the load once it stopped, read through m:
// every acknowledged job succeeds with all its tasks within d, the region
// holds no job of the load's name that no create was acknowledged for (a
// retry with the same request id created nothing twice), and no task had
// two runs RUNNING at once. It returns how many tasks ran more than once
// (a run lost at a fault and run again) and how many had two runs at once.
func (l *failoverLoad) verifyJobs(t *testing.T, m func() *member, d time.Duration) (rerun, dups int) {
	t.Helper()
	s := l.summary()
	lost, regressed := settle(s.acked, d, func(id string) bool {
		var out struct {
			Job struct {
				Status testkit.JobStatus `json:"status"`
			} `json:"job"`
		}
		err := m().Get("/v1/jobs/"+id, &out)
		return err == nil && out.Job.Status.State == "JOB_STATE_SUCCEEDED" && out.Job.Status.TaskStates["SUCCEEDED"] == l.tasks
	})
	if lost > 0 {
		t.Errorf("%d of %d acknowledged jobs did not succeed with their %d tasks within %v", lost, len(s.acked), l.tasks, d)
	}
	if regressed > 0 {
		t.Logf("%d jobs read SUCCEEDED, then not, before settling", regressed)
	}
	var list struct {
		Jobs []struct {
			ID   string `json:"id"`
			Spec struct {
				Name string `json:"name"`
			} `json:"spec"`
		} `json:"jobs"`
		NextPageToken string `json:"nextPageToken"`
	}
	if err := m().Get("/v1/jobs?limit=5000", &list); err != nil {
		t.Fatal(err)
	}
	if list.NextPageToken != "" {
		t.Fatal("more than 5000 jobs: the test reads one page")
	}
	acked := map[string]bool{}
	for _, id := range s.acked {
		acked[id] = true
	}
	extra := 0
	for _, j := range list.Jobs {
		if j.Spec.Name == l.name && !acked[j.ID] {
			extra++
		}
	}
	// A create that failed may have stored its job before it failed.
	if extra > len(s.failed) {
		t.Errorf("the region holds %d jobs no create was acknowledged for (%d creates failed): a retry created a job twice", extra, len(s.failed))
	}
	if s.dupIDs > 0 {
		t.Errorf("%d job ids were acknowledged to two different creates", s.dupIDs)
	}
	for _, id := range s.acked {
		var tasks struct {
			Tasks []chaosTask `json:"tasks"`
		}
		if err := m().Get("/v1/jobs/"+id+"/tasks", &tasks); err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks.Tasks {
			if tk.Run > 1 {
				rerun++
			}
		}
		d, _ := overlappingRuns(t, m(), id)
		dups += d
	}
	if dups > 0 {
		t.Errorf("%d tasks had two runs RUNNING at once", dups)
	}
	return rerun, dups
}
