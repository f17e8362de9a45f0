package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
	"github.com/peloton-federated/peloton/shard/store"
)

// CheckAudit fails on audit records no backend stores: without a time, a
// caller or an RPC, or a ttl that is not positive.
func CheckAudit(recs []model.AuditRecord, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w: audit ttl %v is not positive", store.ErrInvalid, ttl)
	}
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Time.IsZero():
			return fmt.Errorf("%w: audit record %d has no time", store.ErrInvalid, i)
		case r.Name == "":
			return fmt.Errorf("%w: audit record %d names no caller", store.ErrInvalid, i)
		case r.RPC == "":
			return fmt.Errorf("%w: audit record %d names no RPC", store.ErrInvalid, i)
		}
	}
	return nil
}

// CheckAuditQuery fails on a negative limit.
func CheckAuditQuery(q store.AuditQuery) error {
	if q.Limit < 0 {
		return fmt.Errorf("%w: audit query limit %d is negative", store.ErrInvalid, q.Limit)
	}
	return nil
}

// auditFields are a record's strings, in their encoded order.
func auditFields(r *model.AuditRecord) []*string {
	return []*string{&r.Name, &r.Method, &r.ForwardedBy, &r.RPC, &r.Action, &r.Resource, &r.Code, &r.Message, &r.Region}
}

// AppendAudit appends the encoding of an audit record to b: its time in
// nanoseconds since the epoch, then each string with its length.
func AppendAudit(b []byte, r *model.AuditRecord) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
	for _, f := range auditFields(r) {
		b = binary.AppendUvarint(b, uint64(len(*f)))
		b = append(b, *f...)
	}
	return b
}

var errBadAudit = errors.New("corrupt audit record")

// DecodeAudit reads a record AppendAudit encoded.
func DecodeAudit(b []byte) (model.AuditRecord, error) {
	var r model.AuditRecord
	if len(b) < 8 {
		return r, errBadAudit
	}
	r.Time = time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
	b = b[8:]
	for _, f := range auditFields(&r) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return r, errBadAudit
		}
		*f = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	return r, nil
}
