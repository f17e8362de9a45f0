package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/cmd/peloton/cli"
)

// serverBackup is `store backup --server`: a serving region's embedded
// store, copied by its server and streamed here.
type serverBackup struct {
	addr, region string
}

func (s *serverBackup) flags(f *pflag.FlagSet) {
	f.StringVar(&s.addr, "server", "", "a gateway, HOST:PORT (as --addr): back up a serving region's embedded store through it")
	f.StringVar(&s.region, "region", "", "with --server: the region whose store to copy (default: the one the gateway routes to)")
}

// errBadCopy is a copy whose bytes are not what the server sent.
var errBadCopy = errors.New("the copy received is not the one the server sent")

func (s *serverBackup) run(cmd *cobra.Command, out string) error {
	if f := cmd.Flags().Lookup("addr"); f != nil && f.Changed && f.Value.String() != s.addr {
		return fmt.Errorf("--server %s and --addr %s: name the gateway once, with --server", s.addr, f.Value.String())
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("--out: %s exists", out)
	}
	conn, err := cli.Dial(cmd, s.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	started := time.Now()
	sum, err := backupFromServer(cmd.Context(), pb.NewSystemServiceClient(conn), s.region, out)
	if err != nil {
		return conn.Explain(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "backed up the store of region %s through %s to %s in %.1fs: %d bytes, sha256 %s, taken at %s\n",
		sum.GetRegion(), conn.Addr(), out, time.Since(started).Seconds(), sum.GetSizeBytes(), sum.GetSha256(),
		sum.GetTakenAt().AsTime().UTC().Format(time.RFC3339Nano))
	return nil
}

// backupFromServer streams a region's store into a new file out, which
// gets its name once the bytes received have the size and SHA-256 the
// server's summary gives.
func backupFromServer(ctx context.Context, c pb.SystemServiceClient, region, out string) (sum *pb.BackupStoreSummary, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a failed write ends the stream, and the server's copy
	err = writeNew(out, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		sum, err = receiveBackup(ctx, c, region, f)
		return errors.Join(err, f.Sync(), f.Close())
	})
	return sum, err
}

// receiveBackup writes the chunks of one BackupStore stream to w and
// checks them against its summary.
func receiveBackup(ctx context.Context, c pb.SystemServiceClient, region string, w io.Writer) (*pb.BackupStoreSummary, error) {
	stream, err := c.BackupStore(ctx, &pb.BackupStoreRequest{Region: region})
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<20)
	var n uint64
	var sum *pb.BackupStoreSummary
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if sum != nil {
			return nil, fmt.Errorf("%w: a message after the summary", errBadCopy)
		}
		if sum = msg.GetSummary(); sum != nil {
			continue
		}
		if _, err := bw.Write(msg.GetChunk()); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		n += uint64(len(msg.GetChunk()))
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	switch {
	case sum == nil:
		return nil, fmt.Errorf("%w: the stream ended after %d bytes without the summary, so the copy may be short", errBadCopy, n)
	case n != sum.GetSizeBytes() || got != sum.GetSha256():
		return nil, fmt.Errorf("%w: received %d bytes with sha256 %s, the server sent %d bytes with sha256 %s",
			errBadCopy, n, got, sum.GetSizeBytes(), sum.GetSha256())
	}
	return sum, nil
}
