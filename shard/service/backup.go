package service

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// StoreCopier writes a consistent copy of a region's store file: the
// embedded store's Backup, which reads it in one transaction beside the
// writes of the running shard.
type StoreCopier interface {
	Backup(ctx context.Context, w io.Writer) (int64, error)
}

// BackupChunkBytes bounds the store bytes of one BackupStore message.
const BackupChunkBytes = 1 << 20

// Backups serves BackupStore for one region, across its leadership terms.
//
// A backup is spooled first: the store is copied, in its read
// transaction, to an unlinked file in the spool directory (the data
// directory: it needs as much free space as the store takes), hashed on
// the way; then the file is streamed. The read transaction lasts as long
// as a local copy, never as long as the client takes to read: while one
// is open, bbolt cannot remap a growing file, and the region's writes
// would wait for a slow client. Nothing of the engine is involved.
//
// One backup runs at a time; another one meanwhile is refused with
// ResourceExhausted rather than queued, so that a client learns at once
// that a backup is running and can retry.
type Backups struct {
	region   string
	copier   StoreCopier // nil: the region's store is not the embedded one
	spoolDir string
	clock    clock.Clock
	log      *slog.Logger
	chunk    int

	mu      sync.Mutex
	running time.Time // when the running backup began; zero: none runs
}

// NewBackups returns the backups of a region whose store copier copies
// (nil when the store is Cassandra: such a region refuses backups with
// FailedPrecondition, naming the command that reads Cassandra), spooled
// in spoolDir.
func NewBackups(region string, copier StoreCopier, spoolDir string, clk clock.Clock, log *slog.Logger) *Backups {
	return &Backups{region: region, copier: copier, spoolDir: spoolDir, clock: clk, log: log, chunk: BackupChunkBytes}
}

// WithBackups has the server answer BackupStore with b.
func (s *Server) WithBackups(b *Backups) *Server {
	s.api.backups = b
	return s
}

// ErrBackupRunning refuses a backup while another one of the region runs.
var ErrBackupRunning = errors.New("a backup of the region's store is running")

// BackupStore streams a consistent copy of the region's store.
func (s *systemService) BackupStore(req *pb.BackupStoreRequest, stream grpc.ServerStreamingServer[pb.BackupStoreResponse]) error {
	if r := req.GetRegion(); r != "" && r != s.engine.Region() {
		return invalid("region", fmt.Sprintf("%q is not this shard's region (%s)", r, s.engine.Region()))
	}
	if s.backups == nil {
		return status.Errorf(codes.FailedPrecondition, "region %s: this server serves no backups of its store", s.engine.Region())
	}
	return s.backups.serve(stream.Context(), stream.Send)
}

// serve runs one backup: spool, then send.
func (b *Backups) serve(ctx context.Context, send func(*pb.BackupStoreResponse) error) error {
	if b.copier == nil {
		return status.Errorf(codes.FailedPrecondition,
			"region %s keeps its store in Cassandra, which the server does not copy: back it up with `peloton store backup --cassandra HOSTS --keyspace KEYSPACE`", b.region)
	}
	release, err := b.acquire()
	if err != nil {
		return err
	}
	defer release()
	started := b.clock.Now()
	spool, sum, err := b.spool(ctx)
	if err != nil {
		b.log.Warn("store backup failed", "err", err)
		return backupStatus(err, b.spoolDir)
	}
	defer spool.Close()
	copied := b.clock.Now()
	if err := b.send(spool.f, spool.size, send); err != nil {
		b.log.Warn("store backup not delivered", "bytes", spool.size, "err", err)
		return backupStatus(err, b.spoolDir)
	}
	summary := &pb.BackupStoreSummary{Region: b.region, SizeBytes: uint64(spool.size), Sha256: sum, TakenAt: timestamppb.New(started)}
	if err := send(&pb.BackupStoreResponse{Part: &pb.BackupStoreResponse_Summary{Summary: summary}}); err != nil {
		return backupStatus(err, b.spoolDir)
	}
	b.log.Info("store backed up", "bytes", spool.size, "sha256", sum,
		"copy", copied.Sub(started).Round(time.Millisecond), "total", b.clock.Now().Sub(started).Round(time.Millisecond))
	return nil
}

// acquire takes the region's one backup slot.
func (b *Backups) acquire() (release func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running.IsZero() {
		return nil, status.Errorf(codes.ResourceExhausted, "region %s: %v (since %s); one runs at a time, retry once it ends",
			b.region, ErrBackupRunning, b.running.UTC().Format(time.RFC3339))
	}
	b.running = b.clock.Now()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.running = time.Time{}
	}, nil
}

// spooled is a copy of the store in an unlinked file.
type spooled struct {
	f    *os.File
	size int64
}

func (s *spooled) Close() error { return s.f.Close() }

// spool copies the store into a new unlinked file, returning it with the
// copy's SHA-256 in hex.
func (b *Backups) spool(ctx context.Context) (*spooled, string, error) {
	f, err := os.CreateTemp(b.spoolDir, ".store-backup-*.spool")
	if err != nil {
		return nil, "", err
	}
	// Unlinked at once: a server that dies mid-backup leaves nothing.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, "", err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 256<<10)
	n, err := b.copier.Backup(ctx, w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return &spooled{f: f, size: n}, hex.EncodeToString(h.Sum(nil)), nil
}

// send streams size bytes of r in chunks. Each chunk has its own buffer:
// an in-process caller may still hold the previous message.
func (b *Backups) send(r io.Reader, size int64, send func(*pb.BackupStoreResponse) error) error {
	for left := size; left > 0; {
		buf := make([]byte, min(int64(b.chunk), left))
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("read the spooled copy: %w", err)
		}
		if err := send(&pb.BackupStoreResponse{Part: &pb.BackupStoreResponse_Chunk{Chunk: buf}}); err != nil {
			return err
		}
		left -= int64(len(buf))
	}
	return nil
}

// backupStatus is the gRPC status of a failed backup.
func backupStatus(err error, spoolDir string) error {
	if _, ok := status.FromError(err); ok {
		return err // the stream's own (the caller went away)
	}
	if errors.Is(err, syscall.ENOSPC) {
		return status.Errorf(codes.ResourceExhausted, "no room to spool the backup in %s (it needs as much free space as the store takes): %v", spoolDir, err)
	}
	return toStatus(err)
}
