package core

import (
	"github.com/peloton-federated/peloton/shard/model"
)

// Published is the snapshot a write set's job shows once written: the
// record as written when it was, else the job's last snapshot, with the
// counts and status the pass wrote.
func (jw *jobWrite) Published(last *model.Job) *model.Job {
	j := *last
	if jw.Record != nil {
		j = *jw.Record
	}
	j.Status = jw.Status
	return &j
}
