package testkit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// CLI runs the peloton command-line client as an operator would.
type CLI struct {
	Bin string
	// Addr is set as PELOTON_ADDR unless empty.
	Addr string
	// Env is added to the test's environment.
	Env []string
	// Within bounds each run (default 2 min): a client that hangs is
	// stopped and its run fails.
	Within time.Duration
}

// Result is what one run of the CLI produced.
type Result struct {
	Stdout, Stderr string
	// Code is the exit status; -1 when the client could not run, was
	// killed, or was stopped at its deadline (Stderr then says why).
	Code int
}

// Run runs the client with args; it is safe from any goroutine.
func (c CLI) Run(args ...string) Result {
	within := c.Within
	if within == 0 {
		within = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Env = append(os.Environ(), c.Env...)
	if c.Addr != "" {
		cmd.Env = append(cmd.Env, "PELOTON_ADDR="+c.Addr)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Code, r.Stderr = -1, r.Stderr+"stopped after "+within.String()+": "+ctx.Err().Error()
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		r.Code, r.Stderr = -1, r.Stderr+err.Error()
	}
	return r
}

// Output is the run's standard output, and standard error after it.
func (r Result) Output() string { return r.Stdout + r.Stderr }

// String says how the run ended and what it printed, for a test's
// message.
func (r Result) String() string {
	return "exit " + strconv.Itoa(r.Code) + "\nstdout: " + r.Stdout + "\nstderr: " + r.Stderr
}
