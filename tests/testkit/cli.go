package testkit

import (
	"bytes"
	"context"
	"errors"
	"io"
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
	// output is both, in the order the client wrote them.
	output string
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
	// Stopped at the deadline even when something it started holds its
	// output open.
	cmd.WaitDelay = time.Second
	cmd.Env = append(os.Environ(), c.Env...)
	if c.Addr != "" {
		cmd.Env = append(cmd.Env, "PELOTON_ADDR="+c.Addr)
	}
	var out, errb bytes.Buffer
	var both LogBuffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &both), io.MultiWriter(&errb, &both)
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), output: both.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		why := "stopped after " + within.String() + ": " + ctx.Err().Error()
		r.Code, r.Stderr, r.output = -1, r.Stderr+why, r.output+why
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		r.Code, r.Stderr, r.output = -1, r.Stderr+err.Error(), r.output+err.Error()
	}
	return r
}

// Output is what the run printed on its standard output and error, in
// the order it printed it (as exec.Cmd.CombinedOutput).
func (r Result) Output() string { return r.output }

// String says how the run ended and what it printed, for a test's
// message.
func (r Result) String() string {
	return "exit " + strconv.Itoa(r.Code) + "\nstdout: " + r.Stdout + "\nstderr: " + r.Stderr
}
