package mesos

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/peloton-federated/peloton/shard/model"
)

// exitStatus finds the exit code in a command executor's message
// ("Command exited with status 3").
var exitStatus = regexp.MustCompile(`exited with status (-?\d+)`)

// convertState maps a Mesos task state to a run state. forward is false
// for states the shard does not act on (staging, starting, killing).
// TASK_UNREACHABLE never gets here: an unreachable run is not lost yet
// (see unreachableLocked).
func convertState(s mesoslib.TaskState) (state model.TaskState, forward bool) {
	switch s {
	case mesoslib.TASK_RUNNING:
		return model.TaskRunning, true
	case mesoslib.TASK_FINISHED:
		return model.TaskSucceeded, true
	case mesoslib.TASK_FAILED, mesoslib.TASK_ERROR:
		return model.TaskFailed, true
	case mesoslib.TASK_KILLED:
		return model.TaskKilled, true
	case mesoslib.TASK_LOST, mesoslib.TASK_DROPPED, mesoslib.TASK_GONE, mesoslib.TASK_GONE_BY_OPERATOR,
		mesoslib.TASK_UNKNOWN:
		return model.TaskLost, true
	}
	return 0, false
}

// statusDetails derives the reason, message and exit code of a status.
func statusDetails(st *mesoslib.TaskStatus, state model.TaskState) (reason, msg string, code int32) {
	mstate := st.GetState().String()
	msg = mstate
	if st.Reason != nil {
		msg += " (" + st.Reason.String() + ")"
	}
	if m := st.GetMessage(); m != "" {
		msg += ": " + m
	}
	if sub := exitStatus.FindStringSubmatch(st.GetMessage()); sub != nil {
		if n, err := strconv.ParseInt(sub[1], 10, 32); err == nil {
			code = int32(n)
		}
	}
	switch state {
	case model.TaskSucceeded:
		reason = model.ReasonExitZero
	case model.TaskFailed:
		switch {
		case st.GetState() == mesoslib.TASK_ERROR:
			reason = model.ReasonLaunchError
		case code != 0:
			reason = model.ReasonExitNonZero
		default:
			reason = mesosReason(st)
		}
	case model.TaskKilled:
		reason = model.ReasonKilled
	case model.TaskLost:
		switch st.GetState() {
		case mesoslib.TASK_UNKNOWN:
			reason = model.ReasonUnknownTask
		case mesoslib.TASK_LOST:
			if st.GetReason() == mesoslib.REASON_RECONCILIATION {
				reason = model.ReasonUnknownTask
			} else {
				reason = model.ReasonHostLost
			}
		case mesoslib.TASK_DROPPED:
			reason = model.ReasonLaunchError
		default:
			reason = model.ReasonHostLost
		}
	}
	return reason, msg, code
}

func mesosReason(st *mesoslib.TaskStatus) string {
	if st.Reason == nil {
		return model.ReasonExitNonZero
	}
	return strings.TrimPrefix(st.Reason.String(), "REASON_")
}

// statusTime is the status's timestamp, or now.
func statusTime(st *mesoslib.TaskStatus, now time.Time) time.Time {
	if st.Timestamp == nil || *st.Timestamp <= 0 {
		return now
	}
	sec := *st.Timestamp
	return time.Unix(0, int64(sec*1e9))
}
