package mesostest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/peloton-federated/peloton/shard/model"
)

// noRedirect shows 307s instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func post(t *testing.T, url, contentType string, body []byte, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func subscribeJSON(t *testing.T, url string) (*http.Response, string, *bufio.Reader) {
	t.Helper()
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"test","failover_timeout":60}}}`
	resp := post(t, url, typeJSON, []byte(body), map[string]string{"Accept": typeJSON})
	if resp.StatusCode != 200 {
		t.Fatalf("subscribe status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	ev := readEvent(t, r)
	if ev.Type != scheduler.Event_SUBSCRIBED || ev.Subscribed.GetHeartbeatIntervalSeconds() <= 0 {
		t.Fatalf("first event = %v", ev)
	}
	return resp, ev.Subscribed.FrameworkID.Value, r
}

// readEvent reads one RecordIO record of a JSON stream.
func readEvent(t *testing.T, r *bufio.Reader) *scheduler.Event {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("record length %q: %v", line, err)
	}
	buf := make([]byte, n)
	if _, err := readFull(r, buf); err != nil {
		t.Fatal(err)
	}
	var ev scheduler.Event
	if err := json.Unmarshal(buf, &ev); err != nil {
		t.Fatal(err)
	}
	return &ev
}

func readFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestCallsAreAnsweredAsTheDocsSay(t *testing.T) {
	m := New(Config{AllocationInterval: 10 * time.Millisecond})
	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, fwID, _ := subscribeJSON(t, srv.URL)
	defer resp.Body.Close()
	stream := resp.Header.Get(streamHeader)
	if stream == "" {
		t.Fatal("no Mesos-Stream-Id")
	}
	revive := `{"type":"REVIVE","framework_id":{"value":"` + fwID + `"}}`
	cases := []struct {
		name, contentType, body string
		header                  map[string]string
		want                    int
	}{
		{"accepted", typeJSON, revive, map[string]string{streamHeader: stream}, 202},
		{"no stream id", typeJSON, revive, nil, 400},
		{"wrong stream id", typeJSON, revive, map[string]string{streamHeader: "nope"}, 400},
		{"not json", typeJSON, "{", map[string]string{streamHeader: stream}, 400},
		{"no type", typeJSON, `{"framework_id":{"value":"` + fwID + `"}}`, map[string]string{streamHeader: stream}, 400},
		{"no framework id", typeJSON, `{"type":"REVIVE"}`, map[string]string{streamHeader: stream}, 400},
		{"accept without accept", typeJSON, `{"type":"ACCEPT","framework_id":{"value":"` + fwID + `"}}`, map[string]string{streamHeader: stream}, 400},
		{"operation ack without uuid", typeJSON, `{"type":"ACKNOWLEDGE_OPERATION_STATUS","framework_id":{"value":"` + fwID + `"},"acknowledge_operation_status":{"operation_id":{"value":"op"}}}`, map[string]string{streamHeader: stream}, 400},
		{"operation ack", typeJSON, `{"type":"ACKNOWLEDGE_OPERATION_STATUS","framework_id":{"value":"` + fwID + `"},"acknowledge_operation_status":{"operation_id":{"value":"op"},"uuid":"AAAAAAAAAAAAAAAAAAAAAA=="}}`, map[string]string{streamHeader: stream}, 202},
		{"unknown framework", typeJSON, `{"type":"REVIVE","framework_id":{"value":"other"}}`, map[string]string{streamHeader: stream}, 403},
		{"bad media type", "text/plain", revive, nil, 415},
		{"bad protobuf", typeProtobuf, "\xff\xff", nil, 400},
	}
	for _, c := range cases {
		r := post(t, srv.URL, c.contentType, []byte(c.body), c.header)
		r.Body.Close()
		if r.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, r.StatusCode, c.want)
		}
	}
	m.SetRedirect("127.0.0.1:1")
	r := post(t, srv.URL, typeJSON, []byte(revive), map[string]string{streamHeader: stream})
	r.Body.Close()
	if r.StatusCode != 307 || r.Header.Get("Location") != "//127.0.0.1:1"+Path {
		t.Errorf("standby answered %d Location %q", r.StatusCode, r.Header.Get("Location"))
	}
}

func TestInvalidAcceptsAreReportedAsMesosDoes(t *testing.T) {
	m := New(Config{AllocationInterval: 10 * time.Millisecond})
	if err := m.AddAgents(AgentSpec{ID: "S0", CPU: 2, MemMB: 1024}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, fwID, r := subscribeJSON(t, srv.URL)
	defer resp.Body.Close()
	stream := resp.Header.Get(streamHeader)
	m.Tick()
	ev := readEvent(t, r)
	for ev.Type != scheduler.Event_OFFERS {
		ev = readEvent(t, r)
	}
	offer := ev.Offers.Offers[0]
	acceptBody := func(offerID, taskID string, cpus float64) []byte {
		call := scheduler.Call{Type: scheduler.Call_ACCEPT, FrameworkID: &mesos.FrameworkID{Value: fwID},
			Accept: &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{{Value: offerID}}, Operations: []mesos.Offer_Operation{{
				Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{{
					Name: taskID, TaskID: mesos.TaskID{Value: taskID}, AgentID: offer.AgentID,
					Command:   &mesos.CommandInfo{Value: func() *string { s := "true"; return &s }()},
					Resources: resSum{cpus: model.CoresToMilli(cpus)}.resources("", false)}}}}}}}
		b, err := json.Marshal(&call)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hdr := map[string]string{streamHeader: stream}
	// Too many resources: TASK_ERROR.
	post(t, srv.URL, typeJSON, acceptBody(offer.ID.Value, "t-big", 3), hdr).Body.Close()
	ev = readEvent(t, r)
	if ev.Type != scheduler.Event_UPDATE || ev.Update.Status.GetState() != mesos.TASK_ERROR || len(ev.Update.Status.UUID) != 0 {
		t.Fatalf("oversized task: %v", ev)
	}
	// The offer was used by that ACCEPT: a second one is TASK_LOST.
	post(t, srv.URL, typeJSON, acceptBody(offer.ID.Value, "t-late", 1), hdr).Body.Close()
	ev = readEvent(t, r)
	if ev.Type != scheduler.Event_UPDATE || ev.Update.Status.GetState() != mesos.TASK_LOST || ev.Update.Status.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Fatalf("used offer: %v", ev)
	}
}
