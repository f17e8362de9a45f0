package pelotonv1

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/proto"
)

// Bounds of a CreateJobs call.
const (
	// MaxRequestIDBytes bounds a request id.
	MaxRequestIDBytes = 128
	// MaxJobsPerRequest is the most specs a region may be configured to
	// take in one CreateJobs call (limits.jobsPerRequest).
	MaxJobsPerRequest = 100_000
)

// CheckRequestID says what is wrong with a request id, or "" when it is
// fine (empty is fine: no idempotency asked for).
func CheckRequestID(id string) string {
	if len(id) > MaxRequestIDBytes {
		return fmt.Sprintf("is %d bytes, more than %d", len(id), MaxRequestIDBytes)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return fmt.Sprintf("has %q at byte %d: only letters, digits, '-', '_', '.' and ':' are allowed", rune(c), i)
		}
	}
	return ""
}

// RequestJobID is the id of the job created for spec at position of the
// request requestID: a retry of the request derives the same id, so the
// job it finds stored is the one its first attempt created. The spec is
// hashed as the client sent it (before defaults), so that another spec
// sent under the same request id is another job. The id has the form of a
// UUID of version 8 (RFC 9562) derived by SHA-256, like random job ids;
// its first 48 bits come from the request id alone, so that the jobs of
// one request sit side by side in a store ordered by id.
func RequestJobID(requestID string, position uint32, spec *JobSpec) string {
	var n [8]byte
	prefix := sha256.Sum256(append([]byte("peloton request\x00"), requestID...))
	h := sha256.New()
	binary.BigEndian.PutUint64(n[:], uint64(len(requestID)))
	h.Write([]byte("peloton job\x00"))
	h.Write(n[:])
	h.Write([]byte(requestID))
	binary.BigEndian.PutUint32(n[:4], position)
	h.Write(n[:4])
	// Deterministic bytes of one message are the same for its copies in
	// every process of one build: the gateway that routes the call and
	// the region that creates the job derive the same id.
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(spec)
	h.Write(b)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	copy(sum[:6], prefix[:6])
	sum[6] = sum[6]&0x0f | 0x80 // version 8
	sum[8] = sum[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// SpecPositions are the positions of a CreateJobs request's specs in the
// request its client sent: its positions field, or 0, 1, 2, ... when that
// is empty. It says what is wrong with the field when it is not empty and
// does not give one distinct position per spec.
func (r *CreateJobsRequest) SpecPositions() ([]uint32, string) {
	out := make([]uint32, len(r.GetJobs()))
	if len(r.GetPositions()) == 0 {
		for i := range out {
			out[i] = uint32(i)
		}
		return out, ""
	}
	if len(r.GetPositions()) != len(r.GetJobs()) {
		return nil, fmt.Sprintf("has %d positions for %d specs: give one per spec, or none", len(r.GetPositions()), len(r.GetJobs()))
	}
	seen := make(map[uint32]bool, len(out))
	for i, p := range r.GetPositions() {
		if p >= MaxJobsPerRequest {
			return nil, fmt.Sprintf("[%d] is %d, not below %d", i, p, MaxJobsPerRequest)
		}
		if seen[p] {
			return nil, fmt.Sprintf("[%d]: position %d is given twice", i, p)
		}
		seen[p] = true
		out[i] = p
	}
	return out, ""
}

// JobPath is the path of a CreateJobs spec's field in errors:
// "jobs[3].task.resources.cpu" (field "" gives "jobs[3]").
func JobPath(position uint32, field string) string {
	if field == "" {
		return fmt.Sprintf("jobs[%d]", position)
	}
	return fmt.Sprintf("jobs[%d].%s", position, field)
}

// DecodeCreateJobsRequest decodes the JSON body of a CreateJobs call into
// req as DecodeJobSpec decodes one spec: every structural problem at once,
// with its path ("jobs[3].task.resources.cpu: must be a number"), as a
// *SpecError. The specs are not validated here: each is checked on its own
// by the region, so that one bad spec does not refuse the others.
func DecodeCreateJobsRequest(data []byte, req *CreateJobsRequest) error {
	w, err := decodeMessage(data, req)
	if err != nil {
		return err
	}
	return w.finish(nil)
}
