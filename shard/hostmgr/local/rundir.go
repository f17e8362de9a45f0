package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// Files of a run directory. The plugin writes launchFile and killFile; the
// executor writes the others.
const (
	launchFile   = "launch.json"  // launchRecord, written before the executor starts
	executorFile = "executor.pid" // processRecord of the executor
	startedFile  = "started"      // startedRecord, once the command runs
	exitFile     = "exit"         // exitRecord, once the command ended or failed to start
	killFile     = "kill"         // present once a kill was requested through Kill
	probesFile   = "probes.json"  // probesRecord, written before the executor starts when the task has probes
	healthFile   = "health"       // healthRecord, the probes' verdicts while the command runs
	executorLog  = "executor.log" // the executor's own stdout and stderr
	sandboxDir   = "sandbox"      // the command's working directory
	stdoutFile   = "stdout"
	stderrFile   = "stderr"
)

// launchRecord is what the plugin records about a run when launching it.
type launchRecord struct {
	Run       model.RunID       `json:"run"`
	Host      model.HostID      `json:"host"`
	Command   string            `json:"command"`
	Args      []string          `json:"args,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	StartTime time.Time         `json:"start_time"`
	// User is who the command runs as; absent: the server's user.
	User *runUser `json:"user,omitempty"`
}

// processRecord identifies a process across pid reuse: the start time in
// clock ticks since boot, as /proc/<pid>/stat reports it (0 when unknown).
type processRecord struct {
	Pid        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks,omitempty"`
}

// startedRecord is written by the executor once the command runs.
type startedRecord struct {
	Executor processRecord `json:"executor"`
	Child    processRecord `json:"child"`
	Time     time.Time     `json:"time"`
}

// exitRecord is how a run ended: an exit code, a signal, or a start error.
type exitRecord struct {
	ExitCode   int       `json:"exit_code"`
	Signal     int       `json:"signal,omitempty"`
	StartError string    `json:"start_error,omitempty"`
	Time       time.Time `json:"time"`
}

// message describes the end of a run for people.
func (e exitRecord) message() string {
	switch {
	case e.StartError != "":
		return e.StartError
	case e.Signal != 0:
		return fmt.Sprintf("killed by signal %d", e.Signal)
	default:
		return fmt.Sprintf("exit code %d", e.ExitCode)
	}
}

// pathElement maps a run or volume id to a single, safe path element.
func pathElement[S ~string](id S) string {
	name := url.PathEscape(string(id))
	if strings.HasPrefix(name, ".") {
		name = "%2E" + name[1:]
	}
	return name
}

// writeJSONAtomic writes v to path through a temporary file and a rename, so
// readers see either nothing or the whole record.
func writeJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// readJSON reads a record; ok is false when the file does not exist.
func readJSON(path string, v any) (ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fileTail returns up to n bytes from the end of a file, trimmed, or "".
func fileTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	start := max(info.Size()-n, 0)
	buf := make([]byte, info.Size()-start)
	read, _ := f.ReadAt(buf, start)
	return strings.TrimSpace(string(buf[:read]))
}
