package federation

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
	"github.com/peloton-federated/peloton/shard/store/memstore"
	"google.golang.org/protobuf/proto"
)

// Values as earlier versions wrote them, byte for byte, so that a change
// of the format (a field renumbered, another message) fails here.
const (
	// federation/replicas/west: west's replicas in one list (the layout
	// before parts): job-1 relocated to north, job-2 not.
	oneListWest = "0a16" + "0a07" + "0a056a6f622d31" + "120477657374" + "22056e6f727468" +
		"0a0f" + "0a07" + "0a056a6f622d32" + "120477657374"
	// federation/drills: drill d1 of east, completed.
	drillsD1 = "0a15" + "0a026431" + "120465617374" + "1a09636f6d706c65746564"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func replicaOf(owner, job string) *pb.Replica {
	return &pb.Replica{OwnerRegion: owner, Job: &pb.Job{Id: job}}
}

// jobOfPart is a job id that falls in part.
func jobOfPart(prefix string, part int) string {
	for i := 0; ; i++ {
		if id := fmt.Sprintf("%s-%d", prefix, i); ReplicaPart(id) == part {
			return id
		}
	}
}

// loadAll reads every part of owner's replicas, by job id, and checks
// that each part holds only its own jobs.
func loadAll(t *testing.T, v *ValueReplicas, owner string) map[string]*pb.Replica {
	t.Helper()
	out := map[string]*pb.Replica{}
	for part := range ReplicaParts {
		list, err := v.Load(context.Background(), owner, part)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			if got := ReplicaPart(r.GetJob().GetId()); got != part {
				t.Fatalf("part %d holds %s of part %d", part, r.GetJob().GetId(), got)
			}
			out[r.GetJob().GetId()] = r
		}
	}
	return out
}

// failingValues is a store whose every call fails with err.
type failingValues struct{ err error }

func (f failingValues) CreateRecord(context.Context, *store.Table, string, []byte) error {
	return f.err
}
func (f failingValues) SwapRecord(context.Context, *store.Table, string, uint64, []byte) error {
	return f.err
}
func (f failingValues) GetRecord(context.Context, *store.Table, string) ([]byte, error) {
	return nil, f.err
}
func (f failingValues) ListRecords(context.Context, *store.Table) ([]store.Record, error) {
	return nil, f.err
}
func (f failingValues) DeleteRecord(context.Context, *store.Table, string) error { return f.err }
func (f failingValues) PutRecords(context.Context, *store.Table, []store.Record) error {
	return f.err
}

// Each case starts from a store holding the values given (hex), reads and
// writes replicas, and checks what is read back, what is stored and the
// counts kept for metrics.
func TestValueReplicas(t *testing.T) {
	part1, part2 := ReplicaPart("job-1"), ReplicaPart("job-2")
	cases := []struct {
		name string
		// stored: values in the store at the start, by key, in hex.
		stored map[string]string
		// save: parts saved, by part, before everything is read.
		save map[int][]*pb.Replica
		// want: every replica read back, job id → relocated region.
		want map[string]string
		// wantValues: values that must be in the store after, in hex
		// ("" for an empty list).
		wantValues map[string]string
	}{
		{name: "nothing saved", want: map[string]string{}},
		{name: "saved parts are read back",
			save: map[int][]*pb.Replica{part1: {replicaOf("west", "job-1")}, part2: {replicaOf("west", "job-2")}},
			want: map[string]string{"job-1": "", "job-2": ""},
			// The stored format: one list per part, under its number.
			wantValues: map[string]string{
				partKey("west", part1): "0a0f" + "0a07" + "0a056a6f622d31" + "120477657374",
			}},
		{name: "the one-list layout of earlier versions is read and moved into the parts",
			stored:     map[string]string{"federation/replicas/west": oneListWest},
			want:       map[string]string{"job-1": "north", "job-2": ""},
			wantValues: map[string]string{"federation/replicas/west": ""}},
		{name: "a part saved before the move is newer than the one list",
			stored: map[string]string{"federation/replicas/west": oneListWest},
			save:   map[int][]*pb.Replica{part1: {{OwnerRegion: "west", Job: &pb.Job{Id: "job-1"}, RelocatedRegion: "east"}}},
			want:   map[string]string{"job-1": "east", "job-2": ""}},
		{name: "an emptied one list moves nothing",
			stored: map[string]string{"federation/replicas/west": ""},
			save:   map[int][]*pb.Replica{part2: {replicaOf("west", "job-2")}},
			want:   map[string]string{"job-2": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			for k, h := range c.stored {
				if err := kinds.PutValue(ctx, st, k, mustHex(t, h)); err != nil {
					t.Fatal(err)
				}
			}
			v := NewValueReplicas(st, clock.NewFake(time.Unix(1000, 0)))
			for part, list := range c.save {
				if err := v.Save(ctx, "west", part, list); err != nil {
					t.Fatal(err)
				}
			}
			got := loadAll(t, v, "west")
			if len(got) != len(c.want) {
				t.Fatalf("read %d replicas, want %d", len(got), len(c.want))
			}
			for job, relocated := range c.want {
				if r := got[job]; r == nil || r.GetRelocatedRegion() != relocated || r.GetOwnerRegion() != "west" {
					t.Errorf("%s read as %v, want owner west, relocated to %q", job, r, relocated)
				}
			}
			for k, h := range c.wantValues {
				raw, err := kinds.GetValue(ctx, st, k)
				if err != nil || hex.EncodeToString(raw) != h {
					t.Errorf("%s holds %x (%v), want %s", k, raw, err, h)
				}
			}
			if counts := v.Counts(); len(c.want) > 0 && (len(counts) != 1 || counts[0].Replicas != len(c.want)) {
				t.Errorf("counts %+v, want %d replicas of west", counts, len(c.want))
			}
			// Read again: the same, from the parts alone.
			if again := loadAll(t, v, "west"); len(again) != len(got) {
				t.Errorf("read again: %d replicas, want %d", len(again), len(got))
			}
		})
	}
}

// A store holding 200 replicas in the one-list layout, one part of which
// was saved before the move (as a move cut short leaves it): every job is
// read, each from its part; the one list is emptied; a part saved later
// is read from its own value.
func TestValueReplicasMoveTheOneListOnce(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	var old []*pb.Replica
	for i := range 200 {
		old = append(old, replicaOf("west", fmt.Sprintf("job-%03d", i)))
	}
	data, err := proto.Marshal(&pb.ListReplicasResponse{Replicas: old})
	if err != nil {
		t.Fatal(err)
	}
	if err := kinds.PutValue(ctx, st, "federation/replicas/west", data); err != nil {
		t.Fatal(err)
	}
	v := NewValueReplicas(st, clock.Real{})
	early := ReplicaPart("job-001")
	var earlyList []*pb.Replica
	for _, r := range old {
		if ReplicaPart(r.GetJob().GetId()) == early {
			r = proto.Clone(r).(*pb.Replica)
			if r.GetJob().GetId() == "job-001" {
				r.RelocatedRegion = "north"
			}
			earlyList = append(earlyList, r)
		}
	}
	if err := v.write(ctx, partKey("west", early), earlyList); err != nil {
		t.Fatal(err)
	}
	if got := loadAll(t, v, "west"); len(got) != 200 || got["job-001"].GetRelocatedRegion() != "north" {
		t.Fatalf("read %d replicas (want 200), job-001 relocated to %q (want north, as its part was saved)", len(got), got["job-001"].GetRelocatedRegion())
	}
	if rest, err := v.read(ctx, ownerKey("west")); err != nil || len(rest) != 0 {
		t.Fatalf("the one list after the move: %d replicas, %v; want it emptied", len(rest), err)
	}
	part := ReplicaPart("job-007")
	list, err := v.Load(ctx, "west", part)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.GetJob().GetId() == "job-007" {
			r.RelocatedRegion = "east"
		}
	}
	newID := jobOfPart("job-new", part)
	if err := v.Save(ctx, "west", part, append(list, replicaOf("west", newID))); err != nil {
		t.Fatal(err)
	}
	got := loadAll(t, v, "west")
	if len(got) != 201 || got["job-007"].GetRelocatedRegion() != "east" || got[newID] == nil {
		t.Fatalf("after saving a part: %d replicas, job-007 relocated to %q, %s held %v", len(got), got["job-007"].GetRelocatedRegion(), newID, got[newID] != nil)
	}
	if c := v.Counts(); len(c) != 1 || c[0].Replicas != 201 {
		t.Errorf("counts %+v, want 201 replicas of west", c)
	}
}

// The counts follow what was read and written, by owner; only a save
// dates an arrival.
func TestValueReplicasCounts(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Unix(1000, 0))
	v := NewValueReplicas(memstore.New(), clk)
	p := ReplicaPart("a")
	if err := v.Save(ctx, "west", p, []*pb.Replica{replicaOf("west", "a")}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if err := v.Save(ctx, "west", ReplicaPart("b"), []*pb.Replica{replicaOf("west", "b"), replicaOf("west", jobOfPart("b", ReplicaPart("b")))}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Load(ctx, "north", 3); err != nil {
		t.Fatal(err)
	}
	want := []ReplicaCount{{Owner: "north"}, {Owner: "west", Replicas: 3, Saved: time.Unix(1060, 0)}}
	got := v.Counts()
	if len(got) != len(want) {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Owner != want[i].Owner || got[i].Replicas != want[i].Replicas || !got[i].Saved.Equal(want[i].Saved) {
			t.Errorf("counts[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// What the store cannot read or decode is an error that names the owner
// and part, and wraps the store's.
func TestValueReplicasErrors(t *testing.T) {
	ctx := context.Background()
	corrupt := memstore.New()
	if err := kinds.PutValue(ctx, corrupt, partKey("west", 5), []byte{0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	oldCorrupt := memstore.New()
	if err := kinds.PutValue(ctx, oldCorrupt, ownerKey("west"), []byte{0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		st   store.RecordStore
		is   error
	}{
		{name: "store unavailable", st: failingValues{store.ErrUnavailable}, is: store.ErrUnavailable},
		{name: "a part that does not decode", st: corrupt},
		{name: "a one list that does not decode", st: oldCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewValueReplicas(c.st, clock.Real{}).Load(ctx, "west", 5)
			if err == nil || !strings.Contains(err.Error(), "replicas of west, part 5: ") {
				t.Fatalf("Load: %v, want an error naming west's part 5", err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("Load: %v, want it to wrap %v", err, c.is)
			}
		})
	}
	if err := NewValueReplicas(failingValues{store.ErrUnavailable}, clock.Real{}).Save(ctx, "west", 5, nil); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Save: %v, want the store's error", err)
	}
}

func TestValueDrills(t *testing.T) {
	cases := []struct {
		name   string
		stored string // hex of federation/drills; "-": none
		save   []*pb.Drill
		// want: the drills read back, id → state.
		want      map[string]string
		wantState map[string]int
		wantErr   string
	}{
		{name: "none saved", stored: "-", want: map[string]string{}, wantState: map[string]int{}},
		{name: "written by an earlier version", stored: drillsD1, want: map[string]string{"d1": "completed"}, wantState: map[string]int{}},
		{name: "saved and read back", stored: "-",
			save: []*pb.Drill{{Id: "d1", Region: "east", State: "completed"}, {Id: "d2", Region: "west", State: "running"}, {Id: "d3", Region: "west", State: "running"}},
			want: map[string]string{"d1": "completed", "d2": "running", "d3": "running"}, wantState: map[string]int{"completed": 1, "running": 2}},
		{name: "a value that does not decode", stored: "ffff", wantErr: "decode drills: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			if c.stored != "-" {
				if err := kinds.PutValue(ctx, st, drillsKey, mustHex(t, c.stored)); err != nil {
					t.Fatal(err)
				}
			}
			v := NewValueDrills(st)
			if c.save != nil {
				if err := v.SaveDrills(ctx, c.save); err != nil {
					t.Fatal(err)
				}
			}
			list, err := v.LoadDrills(ctx)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("LoadDrills: %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, d := range list {
				got[d.GetId()] = d.GetState()
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("read %v, want %v", got, c.want)
			}
			if s := v.ByState(); fmt.Sprint(s) != fmt.Sprint(c.wantState) {
				t.Errorf("by state %v, want %v", s, c.wantState)
			}
		})
	}
	if err := NewValueDrills(failingValues{store.ErrUnavailable}).SaveDrills(context.Background(), nil); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("SaveDrills: %v, want the store's error", err)
	}
}
