package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/peloton-federated/peloton/shard/model"
)

// DefaultLogLimit is how much ReadLog returns when asked for limit 0.
const DefaultLogLimit = 1 << 20

// ReadLog returns up to limit bytes (0: DefaultLogLimit) of a run's "stdout"
// or "stderr" from offset (negative: that many bytes before the end), the
// offset just past the data, and the stream's size.
func (p *Plugin) ReadLog(ctx context.Context, run model.RunID, host model.HostID, stream string, offset, limit int64) ([]byte, int64, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, err
	}
	if host != p.host.ID {
		return nil, 0, 0, fmt.Errorf("%w: %q", ErrUnknownHost, host)
	}
	if stream != stdoutFile && stream != stderrFile {
		return nil, 0, 0, fmt.Errorf("%w: %q (want %q or %q)", ErrUnknownStream, stream, stdoutFile, stderrFile)
	}
	if limit < 0 {
		return nil, 0, 0, fmt.Errorf("log limit %d is negative", limit)
	}
	if limit == 0 {
		limit = DefaultLogLimit
	}
	dir := filepath.Join(p.runsDir, pathElement(run))
	if _, err := os.Stat(dir); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %s", ErrUnknownRun, run)
	}
	f, err := os.Open(filepath.Join(dir, stream))
	if errors.Is(err, fs.ErrNotExist) {
		// Not started yet: an empty log.
		return nil, 0, 0, nil
	}
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	size := info.Size()
	start := logStart(offset, size)
	n := min(limit, size-start)
	data := make([]byte, n)
	read, err := f.ReadAt(data, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, 0, err
	}
	return data[:read], start + int64(read), size, nil
}

// logStart turns a requested offset into one within [0, size].
func logStart(offset, size int64) int64 {
	if offset < 0 {
		offset += size
	}
	return min(max(offset, 0), size)
}
