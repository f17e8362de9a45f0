package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/model"
)

// probesRecord is what the executor probes, written by the plugin to
// probesFile before the executor starts so that probing, which lives in
// the executor, outlives a restart of the shard.
type probesRecord struct {
	Health *probeRecord `json:"health,omitempty"`
	Ready  *probeRecord `json:"ready,omitempty"`
}

// probeRecord is one health check with its defaults applied and its port
// resolved to a host port.
type probeRecord struct {
	Kind             string        `json:"kind"`
	Command          string        `json:"command,omitempty"`
	Args             []string      `json:"args,omitempty"`
	Port             uint32        `json:"port,omitempty"`
	Path             string        `json:"path,omitempty"`
	InitialDelay     time.Duration `json:"initial_delay_ns,omitempty"`
	Interval         time.Duration `json:"interval_ns"`
	Timeout          time.Duration `json:"timeout_ns"`
	FailureThreshold uint32        `json:"failure_threshold"`
}

// healthRecord is what the executor's probes say, rewritten on every
// change: "" for a run without that probe, else a model.HealthState name.
type healthRecord struct {
	Health  string    `json:"health,omitempty"`
	Ready   string    `json:"ready,omitempty"`
	Message string    `json:"message,omitempty"`
	Time    time.Time `json:"time"`
	// Changes counts the verdict changes since the command started.
	Changes uint64 `json:"changes"`
}

// states returns the record's verdicts; unknown names read as UNKNOWN.
func (h healthRecord) states() (health, ready model.HealthState) {
	return parseHealth(h.Health), parseHealth(h.Ready)
}

func parseHealth(s string) model.HealthState {
	for _, st := range []model.HealthState{model.HealthUnknown, model.HealthHealthy, model.HealthUnhealthy} {
		if s == st.String() {
			return st
		}
	}
	if s == "" {
		return model.HealthNone
	}
	return model.HealthUnknown
}

// newProbeRecord applies the check's defaults and resolves its port among
// the run's assigned ports. what names the check in errors.
func newProbeRecord(what string, hc *model.HealthCheck, ports []model.NamedPort) (*probeRecord, error) {
	if hc == nil {
		return nil, nil
	}
	h := hc.WithDefaults()
	rec := &probeRecord{
		Kind:             h.Kind.String(),
		InitialDelay:     max(h.InitialDelay, 0),
		Interval:         h.Interval,
		Timeout:          h.Timeout,
		FailureThreshold: h.FailureThreshold,
	}
	switch h.Kind {
	case model.ProbeCommand:
		if h.Command == "" {
			return nil, fmt.Errorf("%s: a command probe needs a command", what)
		}
		rec.Command, rec.Args = h.Command, h.Args
	case model.ProbeHTTP, model.ProbeTCP:
		rec.Port = h.ResolvePort(ports)
		if rec.Port == 0 || rec.Port > 65535 {
			return nil, fmt.Errorf("%s: port %q is neither a named port of the task nor a port number", what, h.Port)
		}
		rec.Path = h.Path
		if h.Kind == model.ProbeHTTP && !strings.HasPrefix(rec.Path, "/") {
			rec.Path = "/" + rec.Path
		}
	default:
		return nil, fmt.Errorf("%s: unknown probe kind %d", what, h.Kind)
	}
	return rec, nil
}

// verdict turns probe results into a health state: UNKNOWN until the first
// success or FailureThreshold failures in a row, HEALTHY after a success,
// UNHEALTHY after FailureThreshold failures in a row.
type verdict struct {
	threshold uint32
	failures  uint32
	state     model.HealthState
}

func newVerdict(threshold uint32) *verdict {
	return &verdict{threshold: max(threshold, 1), state: model.HealthUnknown}
}

// observe records one probe result and reports whether the state changed.
func (v *verdict) observe(ok bool) (model.HealthState, bool) {
	prev := v.state
	if ok {
		v.failures = 0
		v.state = model.HealthHealthy
	} else {
		v.failures++
		if v.failures >= v.threshold {
			v.state = model.HealthUnhealthy
		}
	}
	return v.state, v.state != prev
}

// probeResult is one verdict change of a probe loop.
type probeResult struct {
	state   model.HealthState
	message string
}

// probeSite is where command probes run: beside the command, in its
// sandbox, with its environment, confined as it is.
type probeSite struct {
	sandbox string
	env     []string
	conf    *confinement
}

// runProbe probes every Interval after InitialDelay until ctx ends and
// calls changed with every change of the verdict.
func runProbe(ctx context.Context, clk clock.Clock, rec *probeRecord, site probeSite, changed func(probeResult)) {
	if rec.InitialDelay > 0 {
		select {
		case <-ctx.Done():
			return
		case <-clk.After(rec.InitialDelay):
		}
	}
	v := newVerdict(rec.FailureThreshold)
	for {
		err := probeOnce(ctx, rec, site)
		if ctx.Err() != nil {
			return
		}
		if state, ok := v.observe(err == nil); ok {
			res := probeResult{state: state}
			if err != nil {
				res.message = fmt.Sprintf("%s probe failed (%d in a row): %v", rec.Kind, v.failures, err)
			}
			changed(res)
		}
		select {
		case <-ctx.Done():
			return
		case <-clk.After(rec.Interval):
		}
	}
}

// probeOnce probes the task once within rec.Timeout; nil is healthy.
func probeOnce(ctx context.Context, rec *probeRecord, site probeSite) error {
	ctx, cancel := context.WithTimeout(ctx, rec.Timeout)
	defer cancel()
	switch rec.Kind {
	case model.ProbeCommand.String():
		return probeCommand(ctx, rec, site)
	case model.ProbeHTTP.String():
		return probeHTTP(ctx, rec)
	case model.ProbeTCP.String():
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", probeAddr(rec.Port))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return fmt.Errorf("unknown probe kind %q", rec.Kind)
}

func probeAddr(port uint32) string {
	return net.JoinHostPort("127.0.0.1", strconv.FormatUint(uint64(port), 10))
}

// probeClient sends HTTP probes: straight to the task (no proxy from the
// environment), no redirects followed (3xx is healthy), no connections
// kept between probes.
var probeClient = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func probeHTTP(ctx context.Context, rec *probeRecord) error {
	url := "http://" + probeAddr(rec.Port) + rec.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "peloton-probe")
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("GET %s returned %s", url, resp.Status)
	}
	return nil
}

// probeOutputLimit bounds how much of a command probe's output a failure
// message quotes.
const probeOutputLimit = 256

// probeCommand runs the probe's command in its own process group,
// confined as the run's command is, killed with its group when the
// timeout passes.
func probeCommand(ctx context.Context, rec *probeRecord, site probeSite) error {
	cmd := exec.CommandContext(ctx, rec.Command, rec.Args...)
	cmd.Dir = site.sandbox
	cmd.Env = site.env
	var out limitedBuffer
	out.limit = probeOutputLimit
	cmd.Stdout, cmd.Stderr = &out, &out
	site.conf.command(cmd, rec.Command)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := site.conf.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", rec.Timeout)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = fmt.Errorf("%s", exitErr.ProcessState)
	} else if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		err = fmt.Errorf("cannot start %q: %s", rec.Command, startErrorText(err))
	}
	if s := strings.TrimSpace(out.String()); s != "" {
		return fmt.Errorf("%w: %s", err, s)
	}
	return err
}

// limitedBuffer keeps the first limit bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
