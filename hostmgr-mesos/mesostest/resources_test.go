package mesostest

import (
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// A framework without GPU_RESOURCES is offered nothing of an agent with
// GPUs, as a master with --filter_gpu_resources; one with it is offered
// the GPUs.
func TestGPUAgentsAreOfferedOnlyToGPUFrameworks(t *testing.T) {
	for _, withCap := range []bool{false, true} {
		e := newEmulated(t, AgentSpec{ID: "gpu", CPU: 8, MemMB: 8192, GPU: 2}, AgentSpec{ID: "plain", CPU: 8, MemMB: 8192})
		var caps []mesos.FrameworkInfo_Capability_Type
		if withCap {
			caps = append(caps, mesos.FrameworkInfo_Capability_GPU_RESOURCES)
		}
		f := e.subscribe(t, frameworkInfo("f", "r", "", caps...))
		seen := map[string]bool{}
		gpus := 0.0
		for i := 0; i < 6; i++ {
			o := f.offer(e, "")
			seen[o.AgentID.Value] = true
			for _, r := range o.Resources {
				if r.Name == "gpus" {
					gpus += r.GetScalar().GetValue()
				}
			}
			f.call(&scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}, Filters: &mesos.Filters{RefuseSeconds: new(float64)}}})
		}
		switch {
		case !withCap && (seen["gpu"] || gpus > 0 || !seen["plain"]):
			t.Errorf("without GPU_RESOURCES: offered agents %v with %v gpus, want only the agent without GPUs", seen, gpus)
		case withCap && (!seen["gpu"] || gpus == 0):
			t.Errorf("with GPU_RESOURCES: offered agents %v with %v gpus, want the GPU agent and its GPUs", seen, gpus)
		}
	}
}

// Offers carry the agent's free port ranges; a task takes exactly the
// ports it names, which are offered to no one until it ends; a port the
// offer lacks fails the task TASK_ERROR.
func TestPortsAreTakenFromOffers(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096, Ports: []mesos.Value_Range{{Begin: 31000, End: 31009}}})
	f := e.subscribe(t, frameworkInfo("f", "r", ""))
	o := f.offer(e, "S0")
	got, _ := resourcesPorts(o)
	if len(got) != 1 || got[0] != (mesos.Value_Range{Begin: 31000, End: 31009}) {
		t.Fatalf("offered ports %v", got)
	}
	f.accept(o, launchOp(
		commandTask("t1", "S0", map[string]string{EnvDuration: "1s"}, scalar("cpus", 1, "r"), portsRes("r", 31003, 31004)),
		commandTask("t2", "S0", nil, scalar("cpus", 1, "r"), portsRes("r", 31003)), // taken by t1
		commandTask("t3", "S0", nil, scalar("cpus", 1, "r"), portsRes("r", 40000)), // not the agent's
	))
	for _, id := range []string{"t2", "t3"} {
		st := f.update(id)
		if st.GetState() != mesos.TASK_ERROR || !strings.Contains(st.GetMessage(), "more resources") {
			t.Errorf("%s: %v %q, want TASK_ERROR for ports not offered", id, st.GetState(), st.GetMessage())
		}
	}
	free, _ := e.m.FreePorts("S0")
	if want := []mesos.Value_Range{{Begin: 31000, End: 31002}, {Begin: 31005, End: 31009}}; !sameRanges(free, want) {
		t.Errorf("free ports while t1 runs = %v, want %v", free, want)
	}
	o = f.offer(e, "S0")
	if got, _ := resourcesPorts(o); !sameRanges(got, []mesos.Value_Range{{Begin: 31000, End: 31002}, {Begin: 31005, End: 31009}}) {
		t.Errorf("offer while t1 runs has ports %v", got)
	}
	f.accept(o) // back to the agent
	e.tick(2 * time.Second)
	e.tick(2 * time.Second)
	for st := f.update("t1"); st.GetState() != mesos.TASK_FINISHED; st = f.update("t1") {
		f.ack(st)
	}
	free, _ = e.m.FreePorts("S0")
	if !sameRanges(free, []mesos.Value_Range{{Begin: 31000, End: 31009}}) {
		t.Errorf("free ports after t1 ended = %v", free)
	}
}

func resourcesPorts(o mesos.Offer) ([]mesos.Value_Range, bool) {
	for _, r := range o.Resources {
		if r.Name == "ports" {
			return r.GetRanges().GetRange(), true
		}
	}
	return nil, false
}

func sameRanges(a, b []mesos.Value_Range) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// RESERVE + CREATE + LAUNCH in one ACCEPT; the volume survives the task,
// is offered back only to the framework's role with its persistence id,
// and a second task uses it; DESTROY + UNRESERVE give the disk back.
func TestPersistentVolumeLifecycle(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096, DiskMB: 1000})
	f := e.subscribe(t, frameworkInfo("stateful", "db", "peloton"))
	labels := map[string]string{"peloton.volume": "job-0-data"}
	res := reservedDisk(300, "db", "peloton", labels)
	vol := volume(res, "job-0-data", "data")

	o := f.offer(e, "S0")
	f.accept(o,
		withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{res}}}, "reserve-1"),
		withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{vol}}}, "create-1"),
		launchOp(commandTask("run1", "S0", map[string]string{EnvDuration: "100ms"}, scalar("cpus", 1, "db"), vol)),
	)
	for _, op := range []string{"reserve-1", "create-1"} {
		st := f.next(scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status
		if st.OperationID.Value != op || st.State != mesos.OPERATION_FINISHED || st.UUID == nil {
			t.Fatalf("operation status %+v, want %s OPERATION_FINISHED with a uuid", st, op)
		}
	}
	vols, _ := e.m.Volumes("S0")
	if len(vols) != 1 || vols[0].ID != "job-0-data" || vols[0].Task != "run1" || vols[0].Role != "db" || vols[0].Principal != "peloton" ||
		vols[0].SizeMB != 300 || vols[0].Labels["peloton.volume"] != "job-0-data" {
		t.Fatalf("volumes = %+v", vols)
	}
	e.tick(200 * time.Millisecond)
	e.tick(200 * time.Millisecond)
	for st := f.update("run1"); st.GetState() != mesos.TASK_FINISHED; st = f.update("run1") {
		f.ack(st)
	}

	// Offered back, with its persistence id, to the role only.
	o = f.offerWhere(e, "S0", func(o mesos.Offer) bool { return hasResource(o, "disk", "job-0-data") })
	// Another role's framework, offered the agent while f refuses it, does
	// not see the reservation.
	hour := 3600.0
	f.call(&scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}, Filters: &mesos.Filters{RefuseSeconds: &hour}}})
	other := e.subscribe(t, frameworkInfo("other", "web", ""))
	oo := other.offer(e, "S0")
	if hasResource(oo, "disk", "job-0-data") || reservedIn(oo) || !hasResource(oo, "ports", "") {
		t.Errorf("framework of another role was offered %v", oo.Resources)
	}
	other.call(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	f.call(&scheduler.Call{Type: scheduler.Call_REVIVE})
	o = f.offer(e, "S0")
	// The same id again is refused; a second run uses the volume.
	f.accept(o,
		withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{res}}}, "reserve-2"),
		withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{vol}}}, "create-2"),
		launchOp(commandTask("run2", "S0", map[string]string{EnvDuration: "1h"}, scalar("cpus", 1, "db"), volume(res, "job-0-data", "data"))),
	)
	f.next(scheduler.Event_UPDATE_OPERATION_STATUS) // reserve-2 finished
	st := f.next(scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status
	if st.OperationID.Value != "create-2" || st.State != mesos.OPERATION_ERROR || !strings.Contains(st.GetMessage(), "already in use") {
		t.Errorf("creating the id again: %+v", st)
	}
	e.tick(10 * time.Millisecond)
	e.tick(10 * time.Millisecond)
	started := f.update("run2")
	if started.GetState() != mesos.TASK_STARTING {
		t.Fatalf("run2 on the existing volume: %v %s", started.GetState(), started.GetMessage())
	}
	f.ack(started)
	// In use: DESTROY is refused.
	o = f.offerWhere(e, "S0", reservedIn) // the spare reservation of reserve-2
	f.accept(o, withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_DESTROY, Destroy: &mesos.Offer_Operation_Destroy{Volumes: []mesos.Resource{vol}}}, "destroy-busy"))
	if st := f.next(scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status; st.State != mesos.OPERATION_ERROR || !strings.Contains(st.GetMessage(), "in use by task run2") {
		t.Errorf("destroying a volume in use: %+v", st)
	}
	if code := f.call(&scheduler.Call{Type: scheduler.Call_KILL, Kill: &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: "run2"}}}); code != 202 {
		t.Fatalf("KILL answered %d", code)
	}
	e.tick(10 * time.Millisecond)
	for st := f.update("run2"); st.GetState() != mesos.TASK_KILLED; st = f.update("run2") {
		f.ack(st)
	}
	// DESTROY then UNRESERVE both reservations: the disk is unreserved again.
	o = f.offerWhere(e, "S0", func(o mesos.Offer) bool { return hasResource(o, "disk", "job-0-data") })
	f.accept(o,
		withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_DESTROY, Destroy: &mesos.Offer_Operation_Destroy{Volumes: []mesos.Resource{vol}}}, "destroy"),
		withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_UNRESERVE, Unreserve: &mesos.Offer_Operation_Unreserve{Resources: []mesos.Resource{reservedDisk(600, "db", "peloton", labels)}}}, "unreserve"),
	)
	for _, op := range []string{"destroy", "unreserve"} {
		if st := f.next(scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status; st.OperationID.Value != op || st.State != mesos.OPERATION_FINISHED {
			t.Errorf("%s: %+v", op, st)
		}
	}
	vols, _ = e.m.Volumes("S0")
	resv, _ := e.m.Reservations("S0")
	if len(vols) != 0 || len(resv) != 0 {
		t.Errorf("after DESTROY and UNRESERVE: volumes %+v reservations %+v", vols, resv)
	}
	f.offerWhere(e, "S0", func(o mesos.Offer) bool { return !reservedIn(o) && hasUnreservedDisk(o, 1000) })
}

func reservedIn(o mesos.Offer) bool {
	for _, r := range o.Resources {
		if !r.IsUnreserved() {
			return true
		}
	}
	return false
}

func hasUnreservedDisk(o mesos.Offer, mb float64) bool {
	for _, r := range o.Resources {
		if r.Name == "disk" && r.IsUnreserved() && r.GetScalar().GetValue() == mb {
			return true
		}
	}
	return false
}

// Invalid operations are dropped as the master drops them: with an id the
// framework gets OPERATION_ERROR naming why, and a LAUNCH that counted on
// them fails TASK_ERROR.
func TestInvalidOperationsAreDropped(t *testing.T) {
	e := newEmulated(t, AgentSpec{ID: "S0", CPU: 4, MemMB: 4096, DiskMB: 1000})
	f := e.subscribe(t, frameworkInfo("f", "db", "peloton"))
	res := reservedDisk(100, "db", "peloton", nil)
	cases := []struct {
		name string
		fw   *testFramework
		op   mesos.Offer_Operation
		want string
	}{
		{"create without reserve", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{volume(res, "v", "data")}}}, "Insufficient disk"},
		{"create from unreserved disk", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{volume(scalar("disk", 100, "db"), "v", "data")}}}, "unreserved"},
		{"absolute container path", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{volume(res, "v", "/data")}}}, "relative"},
		{"wrong principal", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{reservedDisk(100, "db", "mallory", nil)}}}, "principal"},
		{"other role", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{reservedDisk(100, "web", "peloton", nil)}}}, "does not hold"},
		{"too much", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{reservedDisk(5000, "db", "peloton", nil)}}}, "not contained"},
		{"unreserve nothing reserved", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_UNRESERVE, Unreserve: &mesos.Offer_Operation_Unreserve{Resources: []mesos.Resource{res}}}, "not contained"},
		{"destroy unknown volume", f, mesos.Offer_Operation{Type: mesos.Offer_Operation_DESTROY, Destroy: &mesos.Offer_Operation_Destroy{Volumes: []mesos.Resource{volume(res, "nope", "data")}}}, "does not exist"},
	}
	for i, c := range cases {
		o := c.fw.offer(e, "S0")
		c.fw.accept(o, withID(c.op, c.name))
		st := c.fw.next(scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status
		if st.State != mesos.OPERATION_ERROR || st.OperationID.Value != c.name || !strings.Contains(st.GetMessage(), c.want) || st.UUID != nil {
			t.Errorf("%s: status %v %q, want OPERATION_ERROR without uuid mentioning %q", c.name, st.State, st.GetMessage(), c.want)
		}
		if got := e.m.Stats().OperationsDropped; got != i+1 {
			t.Errorf("%s: %d operations dropped, want %d", c.name, got, i+1)
		}
	}
	// Without an id, only the launch that needed the volume tells.
	o := f.offer(e, "S0")
	f.accept(o,
		mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{volume(res, "v", "data")}}},
		launchOp(commandTask("needs-volume", "S0", nil, scalar("cpus", 1, "db"), volume(res, "v", "data"))))
	if st := f.update("needs-volume"); st.GetState() != mesos.TASK_ERROR || st.GetReason() != mesos.REASON_TASK_INVALID {
		t.Errorf("launch on a volume never created: %v %v %q", st.GetState(), st.GetReason(), st.GetMessage())
	}
	if d := e.m.DroppedOperations(); len(d) != len(cases)+1 || !strings.HasPrefix(d[len(d)-1], "CREATE: ") {
		t.Errorf("dropped operations %q", d)
	}
	if resv, _ := e.m.Reservations("S0"); len(resv) != 0 {
		t.Errorf("dropped operations left reservations %+v", resv)
	}
	// A framework of role "*" cannot reserve.
	f.call(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	star := e.subscribe(t, frameworkInfo("star", "*", ""))
	o = star.offer(e, "S0")
	star.accept(o, withID(mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{reservedDisk(100, "db", "", nil)}}}, "star"))
	if st := star.next(scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status; st.State != mesos.OPERATION_ERROR || !strings.Contains(st.GetMessage(), "does not hold") {
		t.Errorf("role * reserving: %+v", st)
	}
}
