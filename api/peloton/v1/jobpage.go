package pelotonv1

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
)

// OwnerLabel is the label ListJobs's owner filter reads.
const OwnerLabel = "owner"

// Sizes of a page of ListJobs.
const (
	DefaultJobPageSize = 500
	MaxJobPageSize     = 5000
)

// ErrPageToken: a page token that no ListJobs answer gave.
var ErrPageToken = errors.New("not a page token of ListJobs")

// JobPageSize is the number of jobs a page of ListJobs holds for limit.
func JobPageSize(limit uint32) int {
	if limit == 0 {
		return DefaultJobPageSize
	}
	return min(int(limit), MaxJobPageSize)
}

// JobKey orders jobs in listings: by creation time, then id. A page token
// is the key of the last job of its page; every region orders its jobs by
// it, so the pages of several regions merge (MergeJobPage).
type JobKey struct {
	Created time.Time
	ID      string
}

// KeyOf is a job's key.
func KeyOf(j *Job) JobKey {
	return JobKey{Created: j.GetStatus().GetCreateTime().AsTime(), ID: j.GetId()}
}

// Compare orders keys.
func (k JobKey) Compare(o JobKey) int {
	if c := k.Created.Compare(o.Created); c != 0 {
		return c
	}
	return cmp.Compare(k.ID, o.ID)
}

// Token is the page token that goes on after k.
func (k JobKey) Token() string {
	return base64.RawURLEncoding.EncodeToString([]byte("j1:" + strconv.FormatInt(k.Created.UnixNano(), 10) + ":" + k.ID))
}

// TokenFor is the page token that goes on after k in a listing of order.
// Oldest first keeps the token Token gives, so older tokens stay valid.
func (k JobKey) TokenFor(order JobOrder) string {
	if order != JobOrder_JOB_ORDER_NEWEST_FIRST {
		return k.Token()
	}
	return base64.RawURLEncoding.EncodeToString([]byte("n1:" + strconv.FormatInt(k.Created.UnixNano(), 10) + ":" + k.ID))
}

// ErrPageTokenOrder: a page token given for another order than asked.
var ErrPageTokenOrder = errors.New("page token of another order")

// ParseJobPageToken reads a page token of an oldest first listing; "" is
// the first page (ok false).
func ParseJobPageToken(token string) (key JobKey, ok bool, err error) {
	return ParseJobPageTokenFor(token, JobOrder_JOB_ORDER_OLDEST_FIRST)
}

// ParseJobPageTokenFor reads a page token of a listing in order; "" is
// the first page (ok false).
func ParseJobPageTokenFor(token string, order JobOrder) (key JobKey, ok bool, err error) {
	if token == "" {
		return JobKey{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return JobKey{}, false, ErrPageToken
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || (parts[0] != "j1" && parts[0] != "n1") {
		return JobKey{}, false, ErrPageToken
	}
	if (parts[0] == "n1") != (order == JobOrder_JOB_ORDER_NEWEST_FIRST) {
		return JobKey{}, false, ErrPageTokenOrder
	}
	ns, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return JobKey{}, false, ErrPageToken
	}
	return JobKey{Created: time.Unix(0, ns).UTC(), ID: parts[2]}, true, nil
}

// LabelFilter reads the labels filter of ListJobs: "key=value" or "key".
// It returns the problem of the first malformed one.
func LabelFilter(labels []string) (map[string]*string, error) {
	out := map[string]*string{}
	for i, l := range labels {
		key, value, hasValue := strings.Cut(l, "=")
		if strings.TrimSpace(key) == "" {
			return nil, fmt.Errorf("labels[%d]: %q is not key=value or key", i, l)
		}
		if hasValue {
			out[key] = &value
		} else {
			out[key] = nil
		}
	}
	return out, nil
}

// SortJobs orders jobs by JobKey.
func SortJobs(jobs []*Job) {
	slices.SortStableFunc(jobs, func(a, b *Job) int { return KeyOf(a).Compare(KeyOf(b)) })
}

// CompareFor orders keys as a listing of order does.
func (k JobKey) CompareFor(o JobKey, order JobOrder) int {
	if order == JobOrder_JOB_ORDER_NEWEST_FIRST {
		return o.Compare(k)
	}
	return k.Compare(o)
}

// SortJobsFor orders jobs as a listing of order does.
func SortJobsFor(jobs []*Job, order JobOrder) {
	slices.SortStableFunc(jobs, func(a, b *Job) int { return KeyOf(a).CompareFor(KeyOf(b), order) })
}

// MergeJobPage turns the jobs several regions answered to one request,
// without duplicates, into one page of at most limit jobs, oldest first;
// more says a region had more than it answered. The token is set when
// jobs are left over.
func MergeJobPage(jobs []*Job, limit uint32, more bool) (page []*Job, next string) {
	return MergeJobPageFor(jobs, limit, more, JobOrder_JOB_ORDER_OLDEST_FIRST)
}

// MergeJobPageFor is MergeJobPage for a listing of order: every region
// answered one page in that order after the same token, so the first
// page's worth of their union is the page.
func MergeJobPageFor(jobs []*Job, limit uint32, more bool, order JobOrder) (page []*Job, next string) {
	SortJobsFor(jobs, order)
	n := JobPageSize(limit)
	if len(jobs) > n {
		jobs, more = jobs[:n], true
	}
	if more && len(jobs) > 0 {
		next = KeyOf(jobs[len(jobs)-1]).TokenFor(order)
	}
	return jobs, next
}

// MaxJobSearch is the longest search text of ListJobs, in bytes.
const MaxJobSearch = 200

// MatchesSearch tells whether a job of this id and name holds search,
// ignoring case; an empty search matches every job.
func MatchesSearch(id, name, search string) bool {
	if search == "" {
		return true
	}
	s := strings.ToLower(search)
	return strings.Contains(strings.ToLower(name), s) || strings.Contains(strings.ToLower(id), s)
}

// ListAllJobs pages through ListJobs until the last page.
func ListAllJobs(ctx context.Context, list func(context.Context, *ListJobsRequest) (*ListJobsResponse, error), req *ListJobsRequest) ([]*Job, error) {
	r := proto.Clone(req).(*ListJobsRequest)
	r.Limit = MaxJobPageSize
	var out []*Job
	for {
		resp, err := list(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetJobs()...)
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		r.PageToken = resp.GetNextPageToken()
	}
}
