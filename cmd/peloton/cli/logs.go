package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// tailChunk is the first window read from the end of a log for --tail; it
// grows until it holds enough lines.
const tailChunk = 64 << 10

// maxTailWindow bounds how much --tail reads to find its lines.
const maxTailWindow = 256 << 20

// logReader prints one stream of one task's log, from an offset onwards.
type logReader struct {
	app      *app
	c        *clients
	job      string
	instance uint32
	stream   string
	// run is the run being read; 0 asks for the current one.
	run    uint32
	offset int64
	out    io.Writer
	// notes receives remarks that are not log output, such as a new run starting.
	notes io.Writer
}

func (l *logReader) fetch(ctx context.Context, offset, limit int64) (*pelotonv1.GetTaskLogsResponse, error) {
	ctx, cancel := l.app.rpc(ctx)
	defer cancel()
	return l.c.tasks.GetTaskLogs(ctx, &pelotonv1.GetTaskLogsRequest{
		JobId: l.job, Instance: l.instance, Stream: l.stream, Run: l.run, Offset: offset, Limit: limit,
	})
}

// print writes the log (or its last tail lines when tail >= 0) and, when
// following, keeps writing new output until the task has ended.
func (l *logReader) print(ctx context.Context, tail int, follow bool) error {
	if follow {
		task, err := l.task(ctx)
		if err != nil {
			return err
		}
		l.run = task.GetRun()
	}
	var err error
	if tail >= 0 {
		err = l.printTail(ctx, tail)
	} else {
		err = l.drain(ctx)
	}
	if !follow {
		return err
	}
	if err != nil && !notYetThere(err) {
		return err
	}
	return l.follow(ctx)
}

// drain writes everything from the current offset to the end of the log.
func (l *logReader) drain(ctx context.Context) error {
	for {
		resp, err := l.fetch(ctx, l.offset, 0)
		if err != nil {
			return err
		}
		if _, err := l.out.Write(resp.GetData()); err != nil {
			return err
		}
		next := resp.GetNextOffset()
		if next <= l.offset {
			next = l.offset + int64(len(resp.GetData()))
		}
		progressed := next > l.offset
		l.offset = next
		if !progressed || len(resp.GetData()) == 0 || l.offset >= resp.GetSize() {
			return nil
		}
	}
}

// printTail writes the last n lines of the log, reading backwards from the
// end in growing windows until it has enough lines or the whole log.
func (l *logReader) printTail(ctx context.Context, n int) error {
	probe, err := l.fetch(ctx, 0, 1)
	if err != nil {
		return err
	}
	size := probe.GetSize()
	for window := int64(tailChunk); ; window *= 4 {
		start := max(size-window, 0)
		data, end, err := l.readRange(ctx, start, size)
		if err != nil {
			return err
		}
		lines := lastLines(data, n)
		if len(lines) < len(data) || start == 0 || window >= maxTailWindow {
			// A proper suffix means the nth line from the end starts inside
			// the window; otherwise the window is the whole log, or as much
			// of it as --tail is willing to read.
			if _, err := l.out.Write(lines); err != nil {
				return err
			}
			l.offset = end
			return nil
		}
	}
}

// readRange reads the log bytes in [from, to); it returns them and the
// offset just after them.
func (l *logReader) readRange(ctx context.Context, from, to int64) ([]byte, int64, error) {
	var buf bytes.Buffer
	offset := from
	for offset < to {
		resp, err := l.fetch(ctx, offset, to-offset)
		if err != nil {
			return nil, 0, err
		}
		buf.Write(resp.GetData())
		next := max(resp.GetNextOffset(), offset+int64(len(resp.GetData())))
		if next <= offset || len(resp.GetData()) == 0 {
			break
		}
		offset = next
	}
	return buf.Bytes(), offset, nil
}

// lastLines returns the suffix of data holding its last n lines; a final
// newline ends the last line rather than starting an empty one.
func lastLines(data []byte, n int) []byte {
	if n <= 0 {
		return data[len(data):]
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}

// follow polls for new output until the task has ended and its log is
// drained. When the task starts a new run, it finishes the old run's log
// and continues with the new one from its start.
func (l *logReader) follow(ctx context.Context) error {
	for {
		if err := l.drain(ctx); err != nil && !notYetThere(err) {
			return err
		}
		task, err := l.task(ctx)
		if err != nil {
			return err
		}
		switch {
		case l.run == 0:
			l.run = task.GetRun()
		case task.GetRun() > l.run:
			if err := l.drain(ctx); err != nil && !notYetThere(err) {
				return err
			}
			fmt.Fprintf(l.notes, "--- run %d of instance %d ---\n", task.GetRun(), l.instance)
			l.run, l.offset = task.GetRun(), 0
			continue
		}
		ended, err := l.ended(ctx, task)
		if err != nil {
			return err
		}
		if ended {
			if err := l.drain(ctx); err != nil && !notYetThere(err) {
				return err
			}
			return nil
		}
		if err := l.app.sleep(ctx, l.app.pollInterval); err != nil {
			return err
		}
	}
}

func (l *logReader) task(ctx context.Context) (*pelotonv1.Task, error) {
	ctx, cancel := l.app.rpc(ctx)
	defer cancel()
	resp, err := l.c.tasks.GetTask(ctx, &pelotonv1.GetTaskRequest{JobId: l.job, Instance: l.instance})
	if err != nil {
		return nil, err
	}
	return resp.GetTask(), nil
}

// ended reports whether a task will produce no more output: it is in a
// terminal state and no retry is scheduled, or its job has ended.
func (l *logReader) ended(ctx context.Context, t *pelotonv1.Task) (bool, error) {
	switch t.GetState() {
	case pelotonv1.TaskState_TASK_STATE_SUCCEEDED, pelotonv1.TaskState_TASK_STATE_FAILED,
		pelotonv1.TaskState_TASK_STATE_KILLED, pelotonv1.TaskState_TASK_STATE_LOST:
	default:
		return false, nil
	}
	if t.GetRetryAfter() == nil {
		return true, nil
	}
	job, err := l.app.getJob(ctx, l.c, l.job)
	if err != nil {
		return false, err
	}
	return jobEnded(job.GetStatus().GetState()), nil
}

// notYetThere reports errors meaning the log does not exist yet, as before
// a task has started.
func notYetThere(err error) bool {
	st, ok := grpcStatus(err)
	return ok && (st.Code() == codes.NotFound || st.Code() == codes.FailedPrecondition)
}
