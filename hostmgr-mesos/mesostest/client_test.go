package mesostest

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/peloton-federated/peloton/shard/clock"
)

// testFramework is a scheduler speaking JSON to the emulator over HTTP,
// reading its event stream in the background.
type testFramework struct {
	t      *testing.T
	url    string
	id     string
	stream string
	info   mesos.FrameworkInfo
	events chan *scheduler.Event
	// backlog holds events read while looking for others.
	backlog []*scheduler.Event
}

// emulated is a master on a fake clock served over HTTP; time passes only
// through tick.
type emulated struct {
	m   *Master
	clk *clock.Fake
	srv *httptest.Server
}

func newEmulated(t *testing.T, agents ...AgentSpec) *emulated {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	m := New(Config{Clock: clk, AllocationInterval: 10 * time.Millisecond, KeepTaskInfos: true})
	if err := m.AddAgents(agents...); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	t.Cleanup(func() {
		m.closeAll()
		srv.CloseClientConnections()
		srv.Close()
	})
	return &emulated{m: m, clk: clk, srv: srv}
}

// tick advances the fake clock by d and runs one Tick.
func (e *emulated) tick(d time.Duration) {
	e.clk.Advance(d)
	e.m.Tick()
}

func (e *emulated) subscribe(t *testing.T, info mesos.FrameworkInfo) *testFramework {
	t.Helper()
	body, err := json.Marshal(&scheduler.Call{Type: scheduler.Call_SUBSCRIBE, Subscribe: &scheduler.Call_Subscribe{FrameworkInfo: &info}})
	if err != nil {
		t.Fatal(err)
	}
	resp := post(t, e.srv.URL, typeJSON, body, map[string]string{"Accept": typeJSON})
	if resp.StatusCode != 200 {
		t.Fatalf("subscribe status %d", resp.StatusCode)
	}
	f := &testFramework{t: t, url: e.srv.URL, stream: resp.Header.Get(streamHeader), info: info, events: make(chan *scheduler.Event, 1024)}
	go func() {
		defer resp.Body.Close()
		defer close(f.events)
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			n, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				return
			}
			buf := make([]byte, n)
			if _, err := readFull(r, buf); err != nil {
				return
			}
			var ev scheduler.Event
			if json.Unmarshal(buf, &ev) != nil {
				return
			}
			f.events <- &ev
		}
	}()
	ev := f.next(scheduler.Event_SUBSCRIBED)
	f.id = ev.Subscribed.FrameworkID.Value
	return f
}

// next returns the next event of type typ, keeping others for later.
func (f *testFramework) next(typ scheduler.Event_Type) *scheduler.Event {
	f.t.Helper()
	return f.nextWhere(typ.String(), func(ev *scheduler.Event) bool { return ev.Type == typ })
}

func (f *testFramework) nextWhere(what string, match func(*scheduler.Event) bool) *scheduler.Event {
	f.t.Helper()
	for i, ev := range f.backlog {
		if match(ev) {
			f.backlog = append(f.backlog[:i], f.backlog[i+1:]...)
			return ev
		}
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-f.events:
			if !ok {
				f.t.Fatalf("event stream closed waiting for %s", what)
			}
			if match(ev) {
				return ev
			}
			f.backlog = append(f.backlog, ev)
		case <-timeout:
			f.t.Fatalf("no %s event within 5s", what)
		}
	}
}

// update returns the next status update of a task.
func (f *testFramework) update(task string) mesos.TaskStatus {
	f.t.Helper()
	return f.nextWhere("UPDATE of "+task, func(ev *scheduler.Event) bool {
		return ev.Type == scheduler.Event_UPDATE && ev.Update.Status.TaskID.Value == task
	}).Update.Status
}

// offer returns the next offer, for agent when it is not "", letting
// time pass until one comes. Other offers it meets are declined.
func (f *testFramework) offer(e *emulated, agent string) mesos.Offer {
	f.t.Helper()
	return f.offerWhere(e, agent, func(mesos.Offer) bool { return true })
}

// offerWhere is offer for the first offer that also satisfies ok.
func (f *testFramework) offerWhere(e *emulated, agent string, ok func(mesos.Offer) bool) mesos.Offer {
	f.t.Helper()
	for i := 0; i < 50; i++ {
		for j := 0; j < len(f.backlog); j++ {
			ev := f.backlog[j]
			if ev.Type != scheduler.Event_OFFERS {
				continue
			}
			f.backlog = append(f.backlog[:j], f.backlog[j+1:]...)
			j--
			var found *mesos.Offer
			for k, o := range ev.Offers.Offers {
				if found == nil && (agent == "" || o.AgentID.Value == agent) && ok(o) {
					found = &ev.Offers.Offers[k]
					continue
				}
				f.call(&scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}, Filters: &mesos.Filters{RefuseSeconds: new(float64)}}})
			}
			if found != nil {
				return *found
			}
		}
		e.tick(10 * time.Millisecond)
		select {
		case ev, ok := <-f.events:
			if ok {
				f.backlog = append(f.backlog, ev)
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	f.t.Fatalf("no offer for agent %q", agent)
	return mesos.Offer{}
}

// call posts a call with the framework's id and stream and returns the
// status code.
func (f *testFramework) call(c *scheduler.Call) int {
	f.t.Helper()
	c.FrameworkID = &mesos.FrameworkID{Value: f.id}
	body, err := json.Marshal(c)
	if err != nil {
		f.t.Fatal(err)
	}
	resp := post(f.t, f.url, typeJSON, body, map[string]string{streamHeader: f.stream})
	resp.Body.Close()
	return resp.StatusCode
}

// accept sends ACCEPT of one offer with operations, refusing nothing.
func (f *testFramework) accept(o mesos.Offer, ops ...mesos.Offer_Operation) {
	f.t.Helper()
	zero := 0.0
	code := f.call(&scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
		OfferIDs: []mesos.OfferID{o.ID}, Operations: ops, Filters: &mesos.Filters{RefuseSeconds: &zero}}})
	if code != 202 {
		f.t.Fatalf("ACCEPT answered %d", code)
	}
}

func (f *testFramework) ack(st mesos.TaskStatus) {
	f.t.Helper()
	if len(st.UUID) == 0 {
		return
	}
	if code := f.call(&scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
		AgentID: *st.AgentID, TaskID: st.TaskID, UUID: st.UUID}}); code != 202 {
		f.t.Fatalf("ACKNOWLEDGE answered %d", code)
	}
}

// frameworkInfo is a MULTI_ROLE framework of role with capabilities.
func frameworkInfo(name, role, principal string, caps ...mesos.FrameworkInfo_Capability_Type) mesos.FrameworkInfo {
	failover := 60.0
	info := mesos.FrameworkInfo{User: "u", Name: name, Roles: []string{role}, FailoverTimeout: &failover,
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}}
	for _, c := range caps {
		info.Capabilities = append(info.Capabilities, mesos.FrameworkInfo_Capability{Type: c})
	}
	if principal != "" {
		info.Principal = &principal
	}
	return info
}

func scalar(name string, v float64, role string) mesos.Resource {
	t := mesos.SCALAR
	star := "*"
	return mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: v}, Role: &star,
		AllocationInfo: &mesos.Resource_AllocationInfo{Role: &role}}
}

func reservedDisk(mb float64, role, principal string, labels map[string]string) mesos.Resource {
	r := scalar("disk", mb, role)
	r.Role = &role
	r.Reservation = &mesos.Resource_ReservationInfo{}
	if principal != "" {
		r.Reservation.Principal = &principal
	}
	for k, v := range labels {
		if r.Reservation.Labels == nil {
			r.Reservation.Labels = &mesos.Labels{}
		}
		r.Reservation.Labels.Labels = append(r.Reservation.Labels.Labels, mesos.Label{Key: k, Value: &v})
	}
	return r
}

func volume(r mesos.Resource, id, path string) mesos.Resource {
	mode := mesos.RW
	r.Disk = &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: id},
		Volume: &mesos.Volume{ContainerPath: path, Mode: &mode}}
	return r
}

func portsRes(role string, ports ...uint64) mesos.Resource {
	r := portsResource(mesos.NewRanges(ports...))
	r.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
	return r
}

func commandTask(id, agent string, env map[string]string, rs ...mesos.Resource) mesos.TaskInfo {
	shell := false
	value := "/bin/app"
	cmd := &mesos.CommandInfo{Shell: &shell, Value: &value, Environment: &mesos.Environment{}}
	for k, v := range env {
		cmd.Environment.Variables = append(cmd.Environment.Variables, mesos.Environment_Variable{Name: k, Value: &v})
	}
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: mesos.AgentID{Value: agent}, Command: cmd, Resources: rs}
}

func launchOp(tasks ...mesos.TaskInfo) mesos.Offer_Operation {
	return mesos.Offer_Operation{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: tasks}}
}

func withID(op mesos.Offer_Operation, id string) mesos.Offer_Operation {
	op.ID = &mesos.OperationID{Value: id}
	return op
}

// hasResource reports whether an offer holds a resource named name whose
// persistence id is volumeID ("" for none).
func hasResource(o mesos.Offer, name, volumeID string) bool {
	for _, r := range o.Resources {
		if r.Name == name && r.GetDisk().GetPersistence().GetID() == volumeID {
			return true
		}
	}
	return false
}
