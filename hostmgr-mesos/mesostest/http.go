package mesostest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Path is where the scheduler API is served.
const Path = "/api/v1/scheduler"

const (
	typeProtobuf = "application/x-protobuf"
	typeJSON     = "application/json"
	typeRecordIO = "application/recordio"
	streamHeader = "Mesos-Stream-Id"
	maxBody      = 64 << 20
)

// subscription is one open SUBSCRIBE response stream.
type subscription struct {
	streamID string
	json     bool // events in JSON, else protobuf
	queue    []*scheduler.Event
	signal   chan struct{}
	closed   chan struct{}
}

func (s *subscription) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// send queues an event for a framework's subscription; events for a
// disconnected framework are dropped, as the master drops them.
func (m *Master) send(fw *framework, ev *scheduler.Event) {
	if fw == nil || fw.sub == nil {
		return
	}
	fw.sub.queue = append(fw.sub.queue, ev)
	fw.sub.wake()
}

// disconnect closes a framework's subscription and starts its failover
// timeout; outstanding offers go back to the agents.
func (m *Master) disconnect(fw *framework) {
	if fw.sub == nil {
		return
	}
	close(fw.sub.closed)
	fw.sub = nil
	timeout := time.Duration(fw.info.GetFailoverTimeout() * float64(time.Second))
	fw.failAt = m.clock.Now().Add(timeout)
	for _, o := range fw.offers {
		m.recover(o)
	}
}

// ServeHTTP implements the scheduler endpoint.
func (m *Master) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Expecting 'POST', received '"+r.Method+"'", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != typeProtobuf && ct != typeJSON {
		http.Error(w, "Expecting 'Content-Type' of application/json or application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		m.badRequest(w, "Failed to read body: "+err.Error())
		return
	}
	m.mu.Lock()
	leader := m.redirect
	switch leader {
	case "":
	case noLeader:
		m.stats.Unavailable++
	default:
		m.stats.Redirects++
	}
	m.mu.Unlock()
	switch leader {
	case "":
	case noLeader:
		// endpoints/master/api/v1/scheduler.md: 503 when the leading
		// master cannot be found.
		http.Error(w, "No leading master", http.StatusServiceUnavailable)
		return
	default:
		w.Header().Set("Location", "//"+leader+Path)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	var call scheduler.Call
	if ct == typeJSON {
		err = json.Unmarshal(body, &call)
	} else {
		err = call.Unmarshal(body)
	}
	if err != nil {
		m.badRequest(w, "Failed to parse body into Call: "+err.Error())
		return
	}
	if call.Type == scheduler.Call_UNKNOWN {
		m.badRequest(w, "Expecting 'type' to be present")
		return
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		m.serveSubscribe(w, r, &call, ct)
		return
	}
	code, msg := m.handleCall(&call, r.Header.Get(streamHeader))
	if code == http.StatusBadRequest {
		m.badRequest(w, msg)
		return
	}
	if code != http.StatusAccepted {
		http.Error(w, msg, code)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (m *Master) badRequest(w http.ResponseWriter, msg string) {
	m.mu.Lock()
	m.stats.BadRequests++
	m.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

// responseTypes picks the stream's content type and the events' encoding
// from Accept and Message-Accept, as Mesos 1.2+ does.
func responseTypes(r *http.Request, requestType string) (contentType string, jsonEvents bool, ok bool) {
	accepts := acceptList(r.Header.Values("Accept"))
	has := func(t string) bool {
		for _, a := range accepts {
			if a == t {
				return true
			}
		}
		return false
	}
	if has(typeRecordIO) {
		msg := acceptList(r.Header.Values("Message-Accept"))
		for _, t := range msg {
			if t == typeJSON || t == typeProtobuf {
				return typeRecordIO, t == typeJSON, true
			}
			if t == "*/*" {
				return typeRecordIO, requestType == typeJSON, true
			}
		}
		if len(msg) == 0 {
			return typeRecordIO, requestType == typeJSON, true
		}
		return "", false, false
	}
	switch {
	case len(accepts) == 0 || has("*/*"):
		return requestType, requestType == typeJSON, true
	case has(requestType):
		return requestType, requestType == typeJSON, true
	case has(typeJSON):
		return typeJSON, true, true
	case has(typeProtobuf):
		return typeProtobuf, false, true
	}
	return "", false, false
}

func acceptList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			t, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil {
				out = append(out, t)
			}
		}
	}
	return out
}

func newStreamID() string {
	b := newUUID()
	return hex.EncodeToString(b[:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" + hex.EncodeToString(b[6:8]) + "-" + hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// serveSubscribe validates a SUBSCRIBE, registers the framework and
// streams its events until either side closes the connection.
func (m *Master) serveSubscribe(w http.ResponseWriter, r *http.Request, call *scheduler.Call, requestType string) {
	contentType, jsonEvents, ok := responseTypes(r, requestType)
	if !ok {
		http.Error(w, "Expecting 'Accept' to allow application/json, application/x-protobuf or application/recordio", http.StatusNotAcceptable)
		return
	}
	if call.Subscribe == nil {
		m.badRequest(w, "Expecting 'subscribe' to be present")
		return
	}
	if call.Subscribe.FrameworkInfo == nil {
		m.badRequest(w, "Expecting 'subscribe.framework_info' to be present")
		return
	}
	info := *call.Subscribe.FrameworkInfo
	if call.FrameworkID != nil && (info.ID == nil || info.ID.Value != call.FrameworkID.Value) {
		m.badRequest(w, "'framework_id' differs from 'subscribe.framework_info.id'")
		return
	}
	if msg := validateFrameworkInfo(&info); msg != "" {
		m.badRequest(w, msg)
		return
	}
	sub := &subscription{streamID: newStreamID(), json: jsonEvents, signal: make(chan struct{}, 1), closed: make(chan struct{})}

	m.mu.Lock()
	m.stats.Calls["SUBSCRIBE"]++
	m.stats.Subscribes++
	var errMsg string
	var fw *framework
	switch {
	case info.ID != nil && m.removedFw[info.ID.Value]:
		errMsg = "Framework has been removed"
	case info.ID != nil && m.frameworks[info.ID.Value] != nil:
		fw = m.frameworks[info.ID.Value]
		// One subscription per framework: a new SUBSCRIBE replaces the
		// old one, whose connection is closed.
		m.disconnect(fw)
	default:
		id := ""
		if info.ID != nil {
			id = info.ID.Value // known to an earlier leading master
		} else {
			id = m.cfg.MasterID + "-" + randomSuffix() + "-" + strconv.Itoa(len(m.frameworks))
		}
		fw = &framework{id: id, filters: map[string]time.Time{}, tasks: map[string]*task{}, offers: map[string]*offer{}}
		m.frameworks[id] = fw
	}
	if fw != nil {
		m.attach(fw, info, call.Subscribe.SuppressedRoles, sub)
	}
	m.mu.Unlock()

	w.Header().Set("Content-Type", contentType)
	if contentType == typeRecordIO {
		if jsonEvents {
			w.Header().Set("Message-Content-Type", typeJSON)
		} else {
			w.Header().Set("Message-Content-Type", typeProtobuf)
		}
	}
	if fw != nil {
		w.Header().Set(streamHeader, sub.streamID)
	}
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	if errMsg != "" {
		_ = writeEvent(bw, &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: errMsg}}, jsonEvents)
		_ = bw.Flush()
		return
	}
	m.stream(w, bw, r, fw, sub)
}

func validateFrameworkInfo(info *mesos.FrameworkInfo) string {
	multiRole := hasCapability(info, mesos.FrameworkInfo_Capability_MULTI_ROLE)
	switch {
	case info.Name == "":
		return "'framework_info.name' must be set"
	case multiRole && info.Role != nil:
		return "'FrameworkInfo.role' must not be set when the MULTI_ROLE capability is present"
	case !multiRole && len(info.Roles) > 0:
		return "'FrameworkInfo.roles' must not be set without the MULTI_ROLE capability"
	case multiRole && len(info.Roles) > 1:
		return "this emulator supports one role per framework"
	case info.GetFailoverTimeout() < 0:
		return "'FrameworkInfo.failover_timeout' must not be negative"
	}
	for _, role := range append(append([]string{}, info.Roles...), info.GetRole()) {
		if role == "" || role == "." || role == ".." || strings.ContainsAny(role, " /\\\t\n") {
			return fmt.Sprintf("Role %q is invalid", role)
		}
	}
	return ""
}

func hasCapability(info *mesos.FrameworkInfo, c mesos.FrameworkInfo_Capability_Type) bool {
	for _, x := range info.Capabilities {
		if x.Type == c {
			return true
		}
	}
	return false
}

// attach makes sub the framework's subscription and sends what a freshly
// subscribed framework gets: SUBSCRIBED, unacknowledged updates and inverse
// offers.
func (m *Master) attach(fw *framework, info mesos.FrameworkInfo, suppressed []string, sub *subscription) {
	id := mesos.FrameworkID{Value: fw.id}
	info.ID = &id
	fw.info = info
	fw.multiRole = hasCapability(&info, mesos.FrameworkInfo_Capability_MULTI_ROLE)
	fw.partition = hasCapability(&info, mesos.FrameworkInfo_Capability_PARTITION_AWARE)
	fw.revocable = hasCapability(&info, mesos.FrameworkInfo_Capability_REVOCABLE_RESOURCES)
	fw.gpu = hasCapability(&info, mesos.FrameworkInfo_Capability_GPU_RESOURCES)
	fw.killingState = hasCapability(&info, mesos.FrameworkInfo_Capability_TASK_KILLING_STATE)
	fw.role = info.GetRole()
	if fw.multiRole {
		fw.role = "*"
		if len(info.Roles) > 0 {
			fw.role = info.Roles[0]
		}
	}
	fw.suppress = false
	for _, r := range suppressed {
		if r == fw.role {
			fw.suppress = true
		}
	}
	fw.sub = sub
	fw.failAt = time.Time{}
	hb := m.cfg.HeartbeatInterval.Seconds()
	host, port := "127.0.0.1", uint32(5050)
	m.send(fw, &scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID:              &id,
		HeartbeatIntervalSeconds: &hb,
		MasterInfo:               &mesos.MasterInfo{ID: m.cfg.MasterID, IP: 0x0100007f, Port: &port, Hostname: &host},
	}})
	for _, t := range fw.tasks {
		m.sendHead(t)
	}
	m.sendInverseOffers(m.clock.Now())
}

// stream writes the subscription's events until the client goes away or
// the master closes the subscription.
func (m *Master) stream(w http.ResponseWriter, bw *bufio.Writer, r *http.Request, fw *framework, sub *subscription) {
	flusher, _ := w.(http.Flusher)
	defer func() {
		m.mu.Lock()
		if fw.sub == sub {
			m.disconnect(fw)
		}
		m.mu.Unlock()
	}()
	for {
		m.mu.Lock()
		var batch []*scheduler.Event
		if !m.silent {
			batch, sub.queue = sub.queue, nil
		}
		m.mu.Unlock()
		for _, ev := range batch {
			if err := writeEvent(bw, ev, sub.json); err != nil {
				return
			}
		}
		if len(batch) > 0 {
			if bw.Flush() != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-sub.closed:
			return
		case <-sub.signal:
		}
	}
}

// writeEvent writes one RecordIO record: the length in decimal, a newline,
// then the encoded event.
func writeEvent(w *bufio.Writer, ev *scheduler.Event, jsonEvents bool) error {
	var data []byte
	var err error
	if jsonEvents {
		data, err = json.Marshal(ev)
	} else {
		data, err = ev.Marshal()
	}
	if err != nil {
		return err
	}
	if _, err := w.WriteString(strconv.Itoa(len(data))); err != nil {
		return err
	}
	if err := w.WriteByte('\n'); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
