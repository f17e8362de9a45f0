package mesostest

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func TestSplitResources(t *testing.T) {
	fw := &framework{role: "r", multiRole: true}
	revocable := func(r mesos.Resource) mesos.Resource {
		r.Revocable = &mesos.Resource_RevocableInfo{}
		return r
	}
	reservedForOther := reservedDisk(100, "other", "", nil)
	reservedForOther.AllocationInfo.Role = &fw.role
	cases := []struct {
		name   string
		rs     []mesos.Resource
		sum    resSum
		extras int
		err    string // a fragment of the error; "" for none
	}{
		{"scalars summed", []mesos.Resource{scalar("cpus", 0.5, "r"), scalar("cpus", 0.25, "r"), scalar("mem", 64, "r"), scalar("disk", 10, "r"), scalar("gpus", 1, "r")},
			resSum{cpus: 750, mem: 64, disk: 10, gpus: 1}, 0, ""},
		{"revocable cpus and mem", []mesos.Resource{revocable(scalar("cpus", 1, "r")), revocable(scalar("mem", 32, "r"))},
			resSum{rcpus: 1000, rmem: 32}, 0, ""},
		{"ports and a reserved disk go to the rest", []mesos.Resource{portsRes("r", 80), reservedDisk(100, "r", "", nil)}, resSum{}, 2, ""},
		{"revocable disk", []mesos.Resource{revocable(scalar("disk", 1, "r"))}, resSum{}, 0, `resource "disk" (revocable true) is not offered`},
		{"unknown scalar", []mesos.Resource{scalar("fpgas", 1, "r")}, resSum{}, 0, `resource "fpgas" (revocable false) is not offered`},
		{"zero amount", []mesos.Resource{scalar("cpus", 0, "r")}, resSum{}, 0, "non-positive value"},
		{"another role's allocation", []mesos.Resource{scalar("cpus", 1, "other")}, resSum{}, 0, `not allocated to role "r"`},
		{"reserved for another role", []mesos.Resource{reservedForOther}, resSum{}, 0, `reserved for role "other"`},
		{"revocable ports", []mesos.Resource{revocable(portsRes("r", 80))}, resSum{}, 0, "must be an unreserved scalar"},
	}
	for _, c := range cases {
		sum, extra, err := splitResources(c.rs, fw)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want one saying %q", c.name, err, c.err)
		case c.err == "" && (sum != c.sum || len(extra) != c.extras):
			t.Errorf("%s: sum %+v and %d others, want %+v and %d", c.name, sum, len(extra), c.sum, c.extras)
		}
	}
}

func TestValidateWorkload(t *testing.T) {
	str := func(s string) *string { return &s }
	yes, no := true, false
	mesosType, dockerType := mesos.ContainerInfo_MESOS, mesos.ContainerInfo_DOCKER
	dockerImage, appcImage := mesos.Image_DOCKER, mesos.Image_APPC
	container := func(img *mesos.Image, vols ...mesos.Volume) *mesos.ContainerInfo {
		return &mesos.ContainerInfo{Type: &mesosType, Mesos: &mesos.ContainerInfo_MesosInfo{Image: img}, Volumes: vols}
	}
	entrypoint := &mesos.CommandInfo{Shell: &no}
	cases := []struct {
		name string
		ti   mesos.TaskInfo
		want string // a fragment of the refusal; "" for none
	}{
		{"shell command", mesos.TaskInfo{Command: &mesos.CommandInfo{Shell: &yes, Value: str("true")}}, ""},
		{"shell without a value", mesos.TaskInfo{Command: &mesos.CommandInfo{Shell: &yes}}, "a shell command needs 'value'"},
		{"entrypoint without an image", mesos.TaskInfo{Command: entrypoint, Container: container(nil)}, "runs its image's entrypoint, but it has no image"},
		{"entrypoint of an image", mesos.TaskInfo{Command: entrypoint,
			Container: container(&mesos.Image{Type: &dockerImage, Docker: &mesos.Image_Docker{Name: "nginx"}})}, ""},
		{"docker containerizer", mesos.TaskInfo{Container: &mesos.ContainerInfo{Type: &dockerType}}, "run the Mesos containerizer only"},
		{"docker image without a name", mesos.TaskInfo{Container: container(&mesos.Image{Type: &dockerImage})}, "a DOCKER image needs 'docker.name'"},
		{"appc image without a name", mesos.TaskInfo{Container: container(&mesos.Image{Type: &appcImage})}, "an APPC image needs 'appc.name'"},
		{"image checked before volumes", mesos.TaskInfo{Container: container(&mesos.Image{Type: &dockerImage}, mesos.Volume{})},
			"a DOCKER image needs 'docker.name'"},
		{"volume without a path", mesos.TaskInfo{Container: container(nil, mesos.Volume{ContainerPath: "a"}, mesos.Volume{})},
			"ContainerInfo.volumes[1]: 'container_path' is required"},
		{"container checked before command", mesos.TaskInfo{Command: &mesos.CommandInfo{Shell: &yes}, Container: &mesos.ContainerInfo{Type: &dockerType}},
			"run the Mesos containerizer only"},
		{"health check", mesos.TaskInfo{HealthCheck: &mesos.HealthCheck{}}, "HealthCheck: HealthCheck must specify 'type'"},
		{"check", mesos.TaskInfo{Check: &mesos.CheckInfo{}}, "CheckInfo: CheckInfo must specify 'type'"},
	}
	for _, c := range cases {
		got := validateWorkload(&c.ti)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOfferProblems(t *testing.T) {
	fw, other := &framework{id: "fw"}, &framework{id: "other"}
	a, b := &agent{}, &agent{}
	mine := &offer{fw: fw, agent: a}
	cases := []struct {
		name  string
		id    string
		o     *offer
		seen  map[string]bool
		taken []*offer
		want  string
	}{
		{"fine", "o1", mine, map[string]bool{}, nil, ""},
		{"repeated", "o1", mine, map[string]bool{"o1": true}, nil, "Duplicate offer o1 in the same call"},
		{"unknown", "o1", nil, map[string]bool{}, nil, "Offer o1 is no longer valid"},
		{"foreign", "o1", &offer{fw: other, agent: a}, map[string]bool{}, nil, "Offer o1 is not for framework fw"},
		{"another agent", "o2", &offer{fw: fw, agent: b}, map[string]bool{"o1": true}, []*offer{mine}, "Aggregated offers must belong to one single agent"},
	}
	for _, c := range cases {
		if got := offerProblem(fw, c.id, c.o, c.seen, c.taken); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A call is checked for its framework and stream before its type.
func TestCallerChecks(t *testing.T) {
	m := New(Config{})
	m.frameworks["fw"] = &framework{id: "fw", sub: &subscription{streamID: "s"}}
	m.frameworks["gone"] = &framework{id: "gone"}
	id := func(s string) *mesos.FrameworkID { return &mesos.FrameworkID{Value: s} }
	cases := []struct {
		name   string
		call   scheduler.Call
		stream string
		code   int
		msg    string
	}{
		{"no framework id", scheduler.Call{Type: scheduler.Call_SUPPRESS}, "s", 400, "Expecting 'framework_id' to be present"},
		{"unknown framework", scheduler.Call{Type: scheduler.Call_SUPPRESS, FrameworkID: id("x")}, "s", 403, "Framework cannot be found"},
		{"not subscribed", scheduler.Call{Type: scheduler.Call_SUPPRESS, FrameworkID: id("gone")}, "s", 403, "Framework is not subscribed"},
		{"no stream", scheduler.Call{Type: 99, FrameworkID: id("fw")}, "", 400, "All non-subscribe calls should include the 'Mesos-Stream-Id' header"},
		{"other stream", scheduler.Call{Type: scheduler.Call_SUPPRESS, FrameworkID: id("fw")}, "t", 400,
			"The stream ID 't' included in this request didn't match the stream ID currently associated with framework ID fw"},
		{"unsupported type", scheduler.Call{Type: 99, FrameworkID: id("fw")}, "s", 400, "Unsupported call type 99"},
		{"missing field", scheduler.Call{Type: scheduler.Call_DECLINE, FrameworkID: id("fw")}, "s", 400, "Expecting 'decline' to be present"},
		{"short uuid", scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, FrameworkID: id("fw"), Acknowledge: &scheduler.Call_Acknowledge{}}, "s", 400,
			"Failed to parse UUID: not 16 bytes"},
		{"suppress", scheduler.Call{Type: scheduler.Call_SUPPRESS, FrameworkID: id("fw")}, "s", 202, ""},
	}
	for _, c := range cases {
		if code, msg := m.handleCall(&c.call, c.stream); code != c.code || msg != c.msg {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, msg, c.code, c.msg)
		}
	}
	if !m.frameworks["fw"].suppress {
		t.Errorf("SUPPRESS did not suppress")
	}
}
