package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
)

// maxPollFailures is how many GetJob calls in a row may fail with a
// transient error before waiting gives up.
const maxPollFailures = 20

// safetyPollEvery: while the event stream is healthy, GetJob still runs on
// every n-th tick, in case an event was missed.
const safetyPollEvery = 4

func jobEnded(s pelotonv1.JobState) bool {
	switch s {
	case pelotonv1.JobState_JOB_STATE_SUCCEEDED, pelotonv1.JobState_JOB_STATE_FAILED, pelotonv1.JobState_JOB_STATE_KILLED:
		return true
	}
	return false
}

// waitForJob follows a job until it ends, the timeout elapses (0: never) or
// ctx ends. It follows the job's event stream, refreshing with GetJob when
// tasks change, and falls back to polling GetJob every pollInterval when the
// stream fails. It returns the last job seen and an error carrying the exit
// code: nil for SUCCEEDED, ExitJobFailed for FAILED/KILLED, ExitTimeout.
func (a *app) waitForJob(ctx context.Context, c *clients, job *pelotonv1.Job, timeout time.Duration, progress *progress) (*pelotonv1.Job, error) {
	id := job.GetId()
	watchCtx, stopWatch := context.WithCancel(ctx)
	events := make(chan *pelotonv1.Event, 64)
	watchDone := make(chan error, 1)
	go func() { watchDone <- watchJob(watchCtx, c, id, events) }()
	watchEnded := false
	defer func() {
		stopWatch()
		if !watchEnded {
			<-watchDone
		}
	}()
	var timedOut <-chan time.Time
	if timeout > 0 {
		timedOut = a.clock.After(timeout)
	}
	streamFailed := watchDone // nil once the stream has failed
	streaming, stale := true, true
	tick := a.clock.After(0)
	ticks, failures := 0, 0
	for {
		progress.show(job)
		if jobEnded(job.GetStatus().GetState()) {
			progress.finish(job)
			return job, jobOutcome(job)
		}
		select {
		case <-ctx.Done():
			progress.finish(job)
			return job, ctx.Err()
		case <-timedOut:
			progress.finish(job)
			return job, &exitError{code: ExitTimeout, msg: fmt.Sprintf("job %s is still %s after %s (--timeout)",
				id, shortState(job.GetStatus().GetState()), timeout)}
		case ev := <-events:
			if ev.GetJobId() != id {
				continue
			}
			if st := ev.GetJob(); st != nil {
				job = &pelotonv1.Job{Id: job.GetId(), Spec: job.GetSpec(), Status: st}
			} else {
				stale = true // a task moved; the counts come with the next GetJob
			}
		case <-streamFailed:
			// Fall back to polling; the next tick refreshes at once.
			watchEnded, streaming, stale, streamFailed = true, false, true, nil
		case <-tick:
			ticks++
			tick = a.clock.After(a.pollInterval)
			if streaming && !stale && ticks%safetyPollEvery != 0 {
				continue
			}
			fresh, err := a.getJob(ctx, c, id)
			if err != nil {
				if transient(err) && failures < maxPollFailures {
					failures++
					continue
				}
				progress.finish(job)
				return job, err
			}
			job, stale, failures = fresh, false, 0
		}
	}
}

func (a *app) getJob(ctx context.Context, c *clients, id string) (*pelotonv1.Job, error) {
	ctx, cancel := a.rpc(ctx)
	defer cancel()
	resp, err := c.jobs.GetJob(ctx, &pelotonv1.GetJobRequest{Id: id})
	if err != nil {
		return nil, err
	}
	return resp.GetJob(), nil
}

// transient reports errors worth retrying while following a job.
func transient(err error) bool {
	st, ok := grpcStatus(err)
	return ok && (st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded)
}

// watchJob forwards the job's events until the stream or ctx ends.
func watchJob(ctx context.Context, c *clients, id string, events chan<- *pelotonv1.Event) error {
	stream, err := c.events.Watch(ctx, &pelotonv1.WatchRequest{JobId: id})
	if err != nil {
		return err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			return err
		}
		select {
		case events <- ev:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// jobOutcome is the error (and so the exit code) for an ended job.
func jobOutcome(job *pelotonv1.Job) error {
	st := job.GetStatus()
	if st.GetState() == pelotonv1.JobState_JOB_STATE_SUCCEEDED {
		return nil
	}
	msg := fmt.Sprintf("job %s ended %s", job.GetId(), shortState(st.GetState()))
	if st.GetMessage() != "" {
		msg += ": " + st.GetMessage()
	}
	msg += fmt.Sprintf(" (see: peloton task list %s)", job.GetId())
	return &exitError{code: ExitJobFailed, msg: msg}
}

// progress shows a job's task states while it runs: one line redrawn in
// place on a terminal, plain lines (on change, at most once a second, and
// at least every 10 seconds) otherwise.
type progress struct {
	w        io.Writer
	tty      bool
	clock    clock.Clock
	start    time.Time
	lastText string
	lastAt   time.Time
	printed  bool
}

func (a *app) newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: a.isTerminal(w), clock: a.clock, start: a.clock.Now()}
}

func (p *progress) show(job *pelotonv1.Job) { p.showText(progressText(job, 24)) }

// finish prints the final state and ends the line.
func (p *progress) finish(job *pelotonv1.Job) { p.finishText(progressText(job, 24)) }

// showText shows a progress line (without the elapsed time, which it adds).
func (p *progress) showText(text string) {
	now := p.clock.Now()
	line := text + "  " + roughDuration(now.Sub(p.start))
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.printed = true
		return
	}
	changed := text != p.lastText
	due := now.Sub(p.lastAt) >= time.Second
	if !p.printed || (changed && due) || now.Sub(p.lastAt) >= 10*time.Second {
		fmt.Fprintln(p.w, line)
		p.lastText, p.lastAt, p.printed = text, now, true
	}
}

// finishText prints the final line and ends it.
func (p *progress) finishText(text string) {
	line := text + "  " + roughDuration(p.clock.Now().Sub(p.start))
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", line)
		return
	}
	if text != p.lastText {
		fmt.Fprintln(p.w, line)
		p.lastText = text
	}
}

// progressText is the progress line without the elapsed time:
// "job ID RUNNING [####>>>>........] 8/20 running=4 succeeded=8".
func progressText(job *pelotonv1.Job, width int) string {
	counts := job.GetStatus().GetTaskStates()
	var succeeded, failed, running, seen uint32
	for key, n := range counts {
		seen += n
		switch taskStateOf(key) {
		case pelotonv1.TaskState_TASK_STATE_SUCCEEDED:
			succeeded += n
		case pelotonv1.TaskState_TASK_STATE_FAILED, pelotonv1.TaskState_TASK_STATE_KILLED, pelotonv1.TaskState_TASK_STATE_LOST:
			failed += n
		case pelotonv1.TaskState_TASK_STATE_RUNNING, pelotonv1.TaskState_TASK_STATE_LAUNCHING:
			running += n
		}
	}
	total := max(job.GetSpec().GetInstances(), seen)
	bar := progressBar(width, total, []barSegment{{'#', succeeded}, {'x', failed}, {'>', running}})
	text := fmt.Sprintf("job %s %-11s [%s] %d/%d", job.GetId(), shortState(job.GetStatus().GetState()), bar, succeeded+failed, total)
	if c := taskCounts(counts); c != "" {
		text += "  " + c
	}
	return text
}

type barSegment struct {
	mark  byte
	count uint32
}

// progressBar draws segments proportionally to total in width cells, the
// rest as '.'. Cell boundaries come from rounding cumulative counts, so the
// drawn cells always add up to width.
func progressBar(width int, total uint32, segments []barSegment) string {
	if width <= 0 {
		return ""
	}
	var b strings.Builder
	var cum uint32
	drawn := 0
	for _, s := range segments {
		cum += s.count
		if total == 0 {
			break
		}
		end := int(math.Round(float64(min(cum, total)) / float64(total) * float64(width)))
		for ; drawn < end; drawn++ {
			b.WriteByte(s.mark)
		}
	}
	for ; drawn < width; drawn++ {
		b.WriteByte('.')
	}
	return b.String()
}
