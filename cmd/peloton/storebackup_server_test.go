package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// backupServer answers BackupStore with msgs, then err (nil: the end),
// calling atEnd (if set) when the stream ends.
type backupServer struct {
	pb.SystemServiceClient
	msgs  []*pb.BackupStoreResponse
	err   error
	atEnd func()
}

func (s backupServer) BackupStore(context.Context, *pb.BackupStoreRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[pb.BackupStoreResponse], error) {
	return &backupStream{msgs: s.msgs, err: s.err, atEnd: s.atEnd}, nil
}

type backupStream struct {
	grpc.ClientStream
	msgs  []*pb.BackupStoreResponse
	err   error
	atEnd func()
}

func (s *backupStream) Recv() (*pb.BackupStoreResponse, error) {
	if len(s.msgs) == 0 {
		if s.atEnd != nil {
			s.atEnd()
		}
		return nil, cmp.Or(s.err, io.EOF)
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func chunk(b string) *pb.BackupStoreResponse {
	return &pb.BackupStoreResponse{Part: &pb.BackupStoreResponse_Chunk{Chunk: []byte(b)}}
}

func summary(size uint64, sha string) *pb.BackupStoreResponse {
	return &pb.BackupStoreResponse{Part: &pb.BackupStoreResponse_Summary{Summary: &pb.BackupStoreSummary{Region: "east", SizeBytes: size, Sha256: sha}}}
}

// A backup streamed from a server gets its name only when its bytes are
// the ones the summary describes; otherwise nothing is left behind.
func TestBackupFromServerChecksTheCopy(t *testing.T) {
	sum := sha256.Sum256([]byte("storefile"))
	good := hex.EncodeToString(sum[:])
	cases := []struct {
		name string
		srv  backupServer
		want string // in the error; "" for success
	}{
		{"whole", backupServer{msgs: []*pb.BackupStoreResponse{chunk("store"), chunk("file"), summary(9, good)}}, ""},
		{"another checksum", backupServer{msgs: []*pb.BackupStoreResponse{chunk("store"), chunk("fil3"), summary(9, good)}}, "sha256"},
		{"short", backupServer{msgs: []*pb.BackupStoreResponse{chunk("store"), summary(9, good)}}, "received 5 bytes"},
		{"no summary", backupServer{msgs: []*pb.BackupStoreResponse{chunk("store"), chunk("file")}}, "without the summary"},
		{"a chunk after the summary", backupServer{msgs: []*pb.BackupStoreResponse{chunk("storefile"), summary(9, good), chunk("x")}}, "after the summary"},
		{"refused midway", backupServer{msgs: []*pb.BackupStoreResponse{chunk("store")}, err: status.Error(codes.PermissionDenied, "no")}, "no"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "east.db")
			got, err := backupFromServer(context.Background(), c.srv, "", out)
			entries, _ := os.ReadDir(dir)
			if c.want == "" {
				data, _ := os.ReadFile(out)
				if err != nil || string(data) != "storefile" || got.GetSha256() != good || len(entries) != 1 {
					t.Fatalf("err %v, file %q, summary %v, files %v", err, data, got, entries)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one saying %q", err, c.want)
			}
			if status.Code(err) == codes.Unknown && !errors.Is(err, errBadCopy) {
				t.Errorf("err %v is neither the server's nor errBadCopy", err)
			}
			if len(entries) != 0 {
				t.Fatalf("a failed backup left %v", entries)
			}
		})
	}
}

// An --out that exists is refused, and kept as it was: one there before
// the backup, and one made while it ran.
func TestBackupFromServerRefusesAnExistingFile(t *testing.T) {
	sum := sha256.Sum256([]byte("new"))
	msgs := []*pb.BackupStoreResponse{chunk("new"), summary(3, hex.EncodeToString(sum[:]))}
	for _, meanwhile := range []bool{false, true} {
		dir := t.TempDir()
		out := filepath.Join(dir, "east.db")
		older := func() {
			if err := os.WriteFile(out, []byte("older"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		srv := backupServer{msgs: msgs}
		if meanwhile {
			srv.atEnd = older
		} else {
			older()
		}
		_, err := backupFromServer(context.Background(), srv, "", out)
		if err == nil || !strings.Contains(err.Error(), "--out") || !strings.Contains(err.Error(), "exists") {
			t.Fatalf("backup over a file made meanwhile=%v: %v", meanwhile, err)
		}
		if data, _ := os.ReadFile(out); string(data) != "older" {
			t.Fatalf("meanwhile=%v: the existing file now holds %q", meanwhile, data)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("meanwhile=%v: a refused backup left %v", meanwhile, entries)
		}
	}
}
