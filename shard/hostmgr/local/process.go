package local

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// procStat reads the state letter and start time (clock ticks since boot)
// of a process from /proc.
func procStat(pid int) (state byte, startTicks uint64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold anything; the fields
	// we need follow its closing parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is the state (field 3); the start time is field 22.
	const startTimeIndex = 22 - 3
	if len(fields) <= startTimeIndex || len(fields[0]) != 1 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	ticks, err := strconv.ParseUint(string(fields[startTimeIndex]), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	return fields[0][0], ticks, nil
}

// describeProcess returns the record identifying a live process.
func describeProcess(pid int) processRecord {
	rec := processRecord{Pid: pid}
	if _, ticks, err := procStat(pid); err == nil {
		rec.StartTicks = ticks
	}
	return rec
}

// isRunning reports whether the process rec describes still runs: it exists,
// is not a zombie, and (when its start time is known) is the same process
// and not a later one that reused the pid.
func isRunning(rec processRecord) bool {
	if rec.Pid <= 0 {
		return false
	}
	state, ticks, err := procStat(rec.Pid)
	switch {
	case err == nil:
		if state == 'Z' || state == 'X' {
			return false
		}
		return rec.StartTicks == 0 || ticks == rec.StartTicks
	case errors.Is(err, fs.ErrNotExist):
		return false
	}
	// Without /proc, fall back to probing with signal 0.
	err = syscall.Kill(rec.Pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// signalGroup sends sig to the process group led by rec, if rec still runs.
// A group that is already gone is not an error.
func signalGroup(rec processRecord, sig syscall.Signal) error {
	if !isRunning(rec) {
		return nil
	}
	err := syscall.Kill(-rec.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
