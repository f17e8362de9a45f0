package codec

import (
	"bytes"
	"compress/flate"
	"fmt"
	"sync"

	"github.com/peloton-federated/peloton/shard/store"
)

// maxSpecSize bounds an encoded spec, so a corrupt value cannot make a
// reader allocate without limit. A job of 100,000 instances with an
// override each encodes to about 10 MiB.
const maxSpecSize = 64 << 20

// ErrSpecSize means a spec encodes to more than the codec stores; it wraps
// store.ErrInvalid.
var ErrSpecSize = fmt.Errorf("%w: spec too large", store.ErrInvalid)

var flateWriters = sync.Pool{New: func() any {
	w, err := flate.NewWriter(nil, flate.BestSpeed)
	if err != nil {
		return err // unreachable: BestSpeed is a valid level
	}
	return w
}}

var flateReaders = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// deflate appends raw, flate-compressed, to dst.
func deflate(dst, raw []byte) ([]byte, error) {
	w, ok := flateWriters.Get().(*flate.Writer)
	if !ok {
		return nil, fmt.Errorf("flate writer unavailable")
	}
	defer flateWriters.Put(w)
	out := bytes.NewBuffer(dst)
	w.Reset(out)
	if _, err := w.Write(raw); err != nil {
		return nil, fmt.Errorf("compress spec: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress spec: %w", err)
	}
	return out.Bytes(), nil
}
