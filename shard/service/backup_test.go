package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// fakeCopier writes data as the store's copy, in pieces of 4 KiB, after
// waiting for gate when it has one.
type fakeCopier struct {
	data []byte
	gate chan struct{}
}

func (c *fakeCopier) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	var n int64
	for off := 0; off < len(c.data); off += 4096 {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := w.Write(c.data[off:min(off+4096, len(c.data))])
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func newTestBackups(t *testing.T, c StoreCopier) *Backups {
	b := NewBackups("east", c, t.TempDir(), clock.NewFake(time.Unix(1700000000, 0)), slog.New(slog.DiscardHandler))
	b.chunk = 1000
	return b
}

// received gathers what a backup sends.
type received struct {
	chunks  [][]byte
	summary *pb.BackupStoreSummary
}

func (r *received) send(m *pb.BackupStoreResponse) error {
	if s := m.GetSummary(); s != nil {
		r.summary = s
		return nil
	}
	r.chunks = append(r.chunks, m.GetChunk())
	return nil
}

// The copy arrives in bounded chunks, in order, and the summary's size
// and SHA-256 are the copy's.
func TestBackupStreamsChunksAndSummary(t *testing.T) {
	data := make([]byte, 10_500)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b := newTestBackups(t, &fakeCopier{data: data})
	var got received
	if err := b.serve(context.Background(), got.send); err != nil {
		t.Fatal(err)
	}
	if len(got.chunks) != 11 {
		t.Errorf("%d chunks of at most 1000 bytes for 10500 bytes, want 11", len(got.chunks))
	}
	for i, c := range got.chunks {
		if len(c) > 1000 || len(c) == 0 {
			t.Errorf("chunk %d has %d bytes", i, len(c))
		}
	}
	if whole := bytes.Join(got.chunks, nil); !bytes.Equal(whole, data) {
		t.Fatal("the chunks are not the copy")
	}
	sum := sha256.Sum256(data)
	s := got.summary
	if s == nil || s.GetSizeBytes() != uint64(len(data)) || s.GetSha256() != hex.EncodeToString(sum[:]) || s.GetRegion() != "east" ||
		!s.GetTakenAt().AsTime().Equal(time.Unix(1700000000, 0)) {
		t.Fatalf("summary %v, want %d bytes, sha256 %x, region east", s, len(data), sum)
	}
	// The slot is free again.
	if err := b.serve(context.Background(), (&received{}).send); err != nil {
		t.Fatalf("a second backup after the first: %v", err)
	}
}

// A backup while another runs is refused at once; cancelling the running
// one ends it and frees the slot.
func TestBackupOneAtATimeAndCancel(t *testing.T) {
	c := &fakeCopier{data: make([]byte, 5000), gate: make(chan struct{})}
	b := newTestBackups(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- b.serve(ctx, (&received{}).send) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		running := !b.running.IsZero()
		b.mu.Unlock()
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first backup never started")
		}
		time.Sleep(time.Millisecond)
	}
	err := b.serve(context.Background(), (&received{}).send)
	wantCode(t, "a second backup at once", err, codes.ResourceExhausted, "east", "one runs at a time")
	cancel()
	wantCode(t, "the cancelled backup", <-first, codes.Canceled)
	c.gate = nil
	if err := b.serve(context.Background(), (&received{}).send); err != nil {
		t.Fatalf("a backup after the cancelled one: %v", err)
	}
}

// A region whose store is Cassandra names the command that backs it up;
// a request for another region than the shard's is refused.
func TestBackupRefusals(t *testing.T) {
	err := newTestBackups(t, nil).serve(context.Background(), (&received{}).send)
	wantCode(t, "a Cassandra region", err, codes.FailedPrecondition, "Cassandra", "peloton store backup --cassandra")

	ts := newTestShard(t)
	ts.s.WithBackups(newTestBackups(t, &fakeCopier{data: []byte("store")}))
	err = ts.s.BackupStore(&pb.BackupStoreRequest{Region: "west"}, &fakeBackupStream{ctx: context.Background()})
	wantCode(t, "another region", err, codes.InvalidArgument, "region", "west")
	stream := &fakeBackupStream{ctx: context.Background()}
	if err := ts.s.BackupStore(&pb.BackupStoreRequest{Region: "east"}, stream); err != nil {
		t.Fatal(err)
	}
	if string(bytes.Join(stream.got.chunks, nil)) != "store" || stream.got.summary.GetSizeBytes() != 5 {
		t.Fatalf("backup through the server: %q, %v", bytes.Join(stream.got.chunks, nil), stream.got.summary)
	}
}

type fakeBackupStream struct {
	grpc.ServerStream
	ctx context.Context
	got received
}

func (s *fakeBackupStream) Context() context.Context             { return s.ctx }
func (s *fakeBackupStream) Send(m *pb.BackupStoreResponse) error { return s.got.send(m) }
