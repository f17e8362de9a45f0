package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// API is a client of a server's HTTP/JSON gateway for one test.
type API struct {
	T testing.TB
	// URL is the gateway's base, such as "http://127.0.0.1:5390".
	URL string
	// Client sends the requests; nil: http.DefaultClient, which carries a
	// dev cluster's token (UseDevTokens).
	Client *http.Client
	// Token, when set, is sent as a bearer token.
	Token string
}

// Response is a gateway's answer.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Send sends one request with exactly the headers given (a "Host" entry
// sets the request's Host) and the API's token; err is set when no
// answer came. It is safe from any goroutine.
func (a *API) Send(method, path, body string, header map[string]string) (Response, error) {
	req, err := http.NewRequest(method, a.URL+path, strings.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if a.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: data}, err
}

var jsonHeader = map[string]string{"Content-Type": "application/json"}

// Call sends a JSON request; the test fails when no answer comes.
func (a *API) Call(method, path, body string) Response {
	a.T.Helper()
	r, err := a.Send(method, path, body, jsonHeader)
	if err != nil {
		a.T.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// HTTP is Call's status and body.
func (a *API) HTTP(method, path, body string) (int, []byte) {
	a.T.Helper()
	r := a.Call(method, path, body)
	return r.Code, r.Body
}

// JSON sends a JSON request and decodes the answer into out (nil: not
// read); the test fails unless it answers 200 with JSON.
func (a *API) JSON(method, path, body string, out any) {
	a.T.Helper()
	r := a.Call(method, path, body)
	if r.Code != http.StatusOK {
		a.T.Fatalf("%s %s: %d %s", method, path, r.Code, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			a.T.Fatalf("%s %s: %v: %s", method, path, err, r.Body)
		}
	}
}

// Get decodes the answer to GET path into out; it fails without an
// answer, with a status other than 200, or when the answer does not
// decode. It is safe from any goroutine.
func (a *API) Get(path string, out any) error {
	r, err := a.Send("GET", path, "", nil)
	if err != nil {
		return err
	}
	if r.Code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, r.Code, r.Body)
	}
	return json.Unmarshal(r.Body, out)
}

// CreateJob creates a job from its JSON spec and returns its id.
func (a *API) CreateJob(spec string) string {
	a.T.Helper()
	id, _ := a.CreateJobAt(spec)
	return id
}

// CreateJobAt creates a job from its JSON spec and returns its id and the
// region that served the call.
func (a *API) CreateJobAt(spec string) (id, region string) {
	a.T.Helper()
	r := a.Call("POST", "/v1/jobs", spec)
	var out struct{ Job Job }
	if r.Code != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.Job.ID == "" {
		a.T.Fatalf("POST /v1/jobs: %d %s", r.Code, r.Body)
	}
	return out.Job.ID, r.Header.Get("Grpc-Metadata-Peloton-Region")
}

// Job is GET /v1/jobs/id.
func (a *API) Job(id string) Job {
	a.T.Helper()
	var out struct{ Job Job }
	a.JSON("GET", "/v1/jobs/"+id, "", &out)
	return out.Job
}

// Jobs is GET /v1/jobs.
func (a *API) Jobs() []Job {
	a.T.Helper()
	var out struct{ Jobs []Job }
	a.JSON("GET", "/v1/jobs", "", &out)
	return out.Jobs
}

// Tasks is GET /v1/jobs/id/tasks.
func (a *API) Tasks(id string) []Task {
	a.T.Helper()
	var out struct{ Tasks []Task }
	a.JSON("GET", "/v1/jobs/"+id+"/tasks", "", &out)
	return out.Tasks
}

// WaitJob waits until the job is in state and returns its tasks. A read
// that is not answered (a server restarting) is tried again until the
// deadline.
func (a *API) WaitJob(id, state string, within time.Duration) []Task {
	a.T.Helper()
	deadline := time.Now().Add(within)
	for {
		var out struct{ Job Job }
		err := a.Get("/v1/jobs/"+id, &out)
		if err == nil && out.Job.Status.State == state {
			return a.Tasks(id)
		}
		if time.Now().After(deadline) {
			seen := out.Job.Status.State
			if err != nil {
				seen = err.Error()
			}
			a.T.Fatalf("timed out after %s waiting for job %s %s; last seen: %s", within, id, state, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Regions is each region's health as GET /v1/regions says it. It is safe
// from any goroutine.
func (a *API) Regions() (map[string]string, error) {
	var out struct {
		Regions []struct{ Name, Health string }
	}
	if err := a.Get("/v1/regions", &out); err != nil {
		return nil, err
	}
	h := map[string]string{}
	for _, r := range out.Regions {
		h[r.Name] = r.Health
	}
	return h, nil
}

// RegionsAlive is how many regions GET /v1/regions says are alive (0
// without an answer). It is safe from any goroutine.
func (a *API) RegionsAlive() int {
	h, _ := a.Regions()
	n := 0
	for _, health := range h {
		if health == "alive" {
			n++
		}
	}
	return n
}
