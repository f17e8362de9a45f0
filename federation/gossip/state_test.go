package gossip

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCollectStatesGathersEveryRegion(t *testing.T) {
	pool := startPool(t, []string{"east", "east", "west", "north"}, nil)
	// node-1 leads east; node-2 (east follower) publishes later, so its
	// LTime is higher, but the leader's blob must win. north publishes
	// nothing.
	if err := pool[0].SetLeader(ctxTimeout(t, 10*time.Second), true); err != nil {
		t.Fatal(err)
	}
	blobs := map[int]string{0: `{"region":"east","by":"leader"}`, 2: `{"region":"west"}`, 1: `{"region":"east","by":"follower"}`}
	for _, i := range []int{0, 2, 1} {
		if err := pool[i].SetState([]byte(blobs[i])); err != nil {
			t.Fatal(err)
		}
	}
	for _, collector := range pool {
		got, err := collector.CollectStates(ctxTimeout(t, 10*time.Second), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", collector.Name(), err)
		}
		if len(got) != 2 {
			t.Fatalf("%s collected %d regions, want east and west: %+v", collector.Name(), len(got), got)
		}
		east, west := got["east"], got["west"]
		if east.Node != "node-1" || !east.Leader || string(east.Blob) != blobs[0] {
			t.Errorf("%s: east = %+v, want node-1's leader blob", collector.Name(), east)
		}
		if west.Node != "node-3" || west.Region != "west" || string(west.Blob) != blobs[2] {
			t.Errorf("%s: west = %+v", collector.Name(), west)
		}
	}

	only, err := pool[3].CollectStates(ctxTimeout(t, 10*time.Second), 5*time.Second, "west")
	if err != nil {
		t.Fatal(err)
	}
	if len(only) != 1 || only["west"].Node != "node-3" {
		t.Errorf("filtered by region west: %+v", only)
	}
}

func TestCollectStatesReturnsBeforeTimeoutWhenAllAnswered(t *testing.T) {
	pool := startPool(t, []string{"east", "west"}, nil)
	for _, m := range pool {
		if err := m.SetState([]byte(m.Name())); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	got, err := pool[0].CollectStates(ctxTimeout(t, 30*time.Second), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("collect waited %v although both members answered", elapsed)
	}
	if len(got) != 2 {
		t.Errorf("collected %+v", got)
	}
}

func TestStateLamportTimeOrdersCausally(t *testing.T) {
	pool := startPool(t, []string{"east", "west"}, nil)
	// west publishes many times, east once: east's clock is behind.
	for i := 0; i < 20; i++ {
		if err := pool[1].SetState([]byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := pool[0].SetState([]byte("e0")); err != nil {
		t.Fatal(err)
	}
	first, err := pool[0].CollectStates(ctxTimeout(t, 10*time.Second), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Having seen west's state, east's next state must come after it.
	if err := pool[0].SetState([]byte("e1")); err != nil {
		t.Fatal(err)
	}
	second, err := pool[1].CollectStates(ctxTimeout(t, 10*time.Second), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if second["east"].LTime <= first["west"].LTime {
		t.Errorf("east's state after seeing west has LTime %d, west's was %d", second["east"].LTime, first["west"].LTime)
	}
	if string(second["east"].Blob) != "e1" {
		t.Errorf("east blob = %q", second["east"].Blob)
	}
}

// The largest blob, the longest region and the longest node name together
// still fit in one state reply.
func TestLargestStateFitsOneReply(t *testing.T) {
	longRegion := strings.Repeat("r", MaxRegionLen)
	pool := startPool(t, []string{"east", longRegion}, func(i int, c *Config) {
		if i == 2 {
			c.NodeName = strings.Repeat("n", MaxNodeNameLen)
		}
	})
	blob := bytes.Repeat([]byte("{}"), MaxStateBytes/2)
	if err := pool[1].SetState(blob); err != nil {
		t.Fatal(err)
	}
	got, err := pool[0].CollectStates(ctxTimeout(t, 10*time.Second), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if b := got[longRegion]; !bytes.Equal(b.Blob, blob) || b.Node != pool[1].Name() {
		t.Fatalf("largest state not collected: got %d bytes from %q", len(b.Blob), b.Node)
	}
}
