package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/clock"
)

// Version is the client's version, set at build time with
// -ldflags "-X github.com/peloton-federated/peloton/cmd/peloton/cli.Version=v1.2.3".
var Version = "dev"

// maxMessageBytes bounds one answer of the server.
const maxMessageBytes = 64 << 20

// DefaultAddr is the gateway address used when neither --addr nor
// PELOTON_ADDR is given.
const DefaultAddr = "127.0.0.1:5390"

// Exit codes of the peloton command. They are chosen in one place, ExitCode.
const (
	ExitOK = 0
	// ExitError: invalid input (a bad job spec, flags or arguments, or the
	// server's InvalidArgument) and any error without a more specific code.
	ExitError = 1
	// ExitJobFailed: `job create --wait` saw the job end FAILED or KILLED,
	// or `job update --wait` saw the update ABORTED.
	ExitJobFailed = 2
	// ExitTimeout: --timeout elapsed, or the server answered DeadlineExceeded.
	ExitTimeout = 3
	// ExitNotFound: the job, task or pool does not exist (NotFound).
	ExitNotFound = 4
	// ExitRefused: the request conflicts with the current state or a limit
	// (FailedPrecondition, AlreadyExists, Aborted, ResourceExhausted).
	ExitRefused = 5
	// ExitUnavailable: the server could not be reached (Unavailable).
	ExitUnavailable = 6
	// ExitDenied: the server refused the credentials (Unauthenticated) or
	// the caller may not do this (PermissionDenied).
	ExitDenied = 7
	// ExitInterrupted: the command was interrupted (Ctrl-C).
	ExitInterrupted = 130
)

// exitError carries a message for the user and the exit code to end with.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if st, ok := grpcStatus(err); ok {
		switch st.Code() {
		case codes.OK:
			return ExitOK
		case codes.NotFound:
			return ExitNotFound
		case codes.DeadlineExceeded:
			return ExitTimeout
		case codes.FailedPrecondition, codes.AlreadyExists, codes.Aborted, codes.ResourceExhausted:
			return ExitRefused
		case codes.Unavailable:
			return ExitUnavailable
		case codes.Unauthenticated, codes.PermissionDenied:
			return ExitDenied
		case codes.Canceled:
			return ExitInterrupted
		}
		return ExitError
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitError
}

// grpcStatus finds a gRPC status anywhere in err's chain, keeping the
// server's own message (status.FromError would replace it with err.Error()).
func grpcStatus(err error) (*status.Status, bool) {
	var carrier interface{ GRPCStatus() *status.Status }
	if errors.As(err, &carrier) {
		if st := carrier.GRPCStatus(); st != nil {
			return st, true
		}
	}
	return nil, false
}

// ErrorMessage is what Main prints after "Error: ": the server's message for
// gRPC errors, the error text otherwise.
func ErrorMessage(err error) string {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.msg
	}
	if ExitCode(err) == ExitInterrupted {
		return "interrupted"
	}
	if st, ok := grpcStatus(err); ok {
		return st.Message()
	}
	return err.Error()
}

// Main runs root with a context cancelled by SIGINT/SIGTERM, prints any error
// as "Error: <message>" on stderr and returns the exit code.
func Main(root *cobra.Command) int {
	root.SilenceErrors = true
	root.SilenceUsage = true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if msg := ErrorMessage(err); msg != "" {
		fmt.Fprintf(root.ErrOrStderr(), "Error: %s\n", msg)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(root.ErrOrStderr(), "Run '%s --help' for usage.\n", ue.command)
	}
	return ExitCode(err)
}

// usageError marks a bad flag or argument, so Main can point at --help.
type usageError struct {
	command string
	err     error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// app holds what the client commands share: flags and injected dependencies.
type app struct {
	addr   string
	output string
	// flags are the running command's, for the connection settings.
	flags *pflag.FlagSet
	// tls tells whether the last dial used TLS.
	tls   bool
	clock clock.Clock
	// pollInterval paces GetJob/GetTaskLogs polling.
	pollInterval time.Duration
	// rpcTimeout bounds each unary call.
	rpcTimeout time.Duration
	// isTerminal tells whether progress may be redrawn in place on w.
	isTerminal func(w io.Writer) bool
}

// NewRootCommand returns the `peloton` command with every client command.
// The caller may AddCommand server roles to it; they inherit the persistent
// --addr and -o flags (and may shadow them with local flags of their own).
func NewRootCommand() *cobra.Command {
	return newRootCommand(&app{
		clock:        clock.Real{},
		pollInterval: 500 * time.Millisecond,
		rpcTimeout:   30 * time.Second,
		isTerminal:   isTerminal,
	})
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "peloton",
		Short: "Peloton, federated: a unified resource scheduler",
		Long: `peloton runs batch jobs on a federation of regions.
The client commands talk to a gateway at --addr (or $PELOTON_ADDR, or the
current context: peloton context --help), over TLS with --ca or an
https:// address, as the caller a --token or --cert/--key names.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			a.flags = cmd.Flags()
		},
	}
	root.PersistentFlags().StringVar(&a.addr, "addr", DefaultAddr, "gateway gRPC address, host:port, http:// or https://host:port (env PELOTON_ADDR)")
	root.PersistentFlags().String("token", "", "bearer token to authenticate with (env PELOTON_TOKEN)")
	root.PersistentFlags().String("ca", "", "CA certificate (PEM) to verify the server with; implies TLS (env PELOTON_CA)")
	root.PersistentFlags().String("cert", "", "client certificate (PEM) to authenticate with; implies TLS (env PELOTON_CERT)")
	root.PersistentFlags().String("key", "", "the client certificate's key (PEM) (env PELOTON_KEY)")
	root.PersistentFlags().String("context", "", "the config file's context to use (env PELOTON_CONTEXT)")
	root.PersistentFlags().StringVarP(&a.output, "output", "o", "table", "output format: table, json or yaml")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{command: c.CommandPath(), err: err}
	})
	root.AddCommand(a.jobCommand(), a.updateCommand(), a.taskCommand(), a.poolCommand(), a.hostCommand(), a.clusterCommand(), a.migrateCommand(), a.regionCommand(), a.drillCommand(), a.versionCommand(),
		a.authCommand(), a.auditCommand(), a.contextCommand())
	a.addCompletions(root)
	return root
}

// args wraps a cobra argument check so its failures point at --help.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, list []string) error {
		if err := check(c, list); err != nil {
			return &usageError{command: c.CommandPath(), err: err}
		}
		return nil
	}
}

// clients are the API clients of one connection.
type clients struct {
	conn    *grpc.ClientConn
	jobs    pelotonv1.JobServiceClient
	tasks   pelotonv1.TaskServiceClient
	pools   pelotonv1.PoolServiceClient
	hosts   pelotonv1.HostServiceClient
	regions pelotonv1.RegionServiceClient
	events  pelotonv1.EventServiceClient
	system  pelotonv1.SystemServiceClient
	fed     pelotonv1.FederationServiceClient
	auth    pelotonv1.AuthServiceClient
	audit   pelotonv1.AuditServiceClient
}

// NormalizeAddr turns what a user may type for --addr into a gRPC target:
// a scheme such as http:// and any path are dropped, a missing port becomes
// 5390. Targets with a gRPC resolver scheme (dns:///, unix:) are kept.
func NormalizeAddr(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if strings.HasPrefix(addr, "dns:") || strings.HasPrefix(addr, "unix:") || strings.HasPrefix(addr, "passthrough:") {
		return addr, nil
	}
	for _, scheme := range []string{"http://", "https://", "grpc://"} {
		if len(addr) >= len(scheme) && strings.EqualFold(addr[:len(scheme)], scheme) {
			addr = addr[len(scheme):]
			break
		}
	}
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("bad server address %q: want host:port or http://host:port", addr)
	}
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		addr = addr[:i]
	}
	if addr == "" {
		return "", fmt.Errorf("empty server address; set --addr or PELOTON_ADDR")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		host := strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
		if strings.Contains(host, "]") {
			return "", fmt.Errorf("bad server address %q", addr)
		}
		_, port, _ := net.SplitHostPort(DefaultAddr)
		addr = net.JoinHostPort(host, port)
	}
	return addr, nil
}

func (a *app) dial() (*clients, error) {
	settings, err := a.resolve()
	if err != nil {
		return nil, &exitError{code: ExitError, msg: err.Error()}
	}
	a.addr, a.tls = settings.addr, settings.tls
	target, err := NormalizeAddr(a.addr)
	if err != nil {
		return nil, &exitError{code: ExitError, msg: err.Error()}
	}
	opts, err := settings.dialOptions(target)
	if err != nil {
		return nil, &exitError{code: ExitError, msg: err.Error()}
	}
	// The config of a job with an override per instance is megabytes.
	opts = append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes)),
		grpc.WithChainUnaryInterceptor(a.retryInterceptor))
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, &exitError{code: ExitError, msg: fmt.Sprintf("bad server address %q: %v", a.addr, err)}
	}
	return &clients{
		conn:    conn,
		auth:    pelotonv1.NewAuthServiceClient(conn),
		audit:   pelotonv1.NewAuditServiceClient(conn),
		jobs:    pelotonv1.NewJobServiceClient(conn),
		tasks:   pelotonv1.NewTaskServiceClient(conn),
		pools:   pelotonv1.NewPoolServiceClient(conn),
		hosts:   pelotonv1.NewHostServiceClient(conn),
		regions: pelotonv1.NewRegionServiceClient(conn),
		events:  pelotonv1.NewEventServiceClient(conn),
		system:  pelotonv1.NewSystemServiceClient(conn),
		fed:     pelotonv1.NewFederationServiceClient(conn),
	}, nil
}

// connected adapts a command body that needs the API: it checks -o, dials,
// runs the body and turns an unreachable server into a helpful message.
func (a *app) connected(body func(cmd *cobra.Command, args []string, c *clients) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := a.checkOutput(); err != nil {
			return err
		}
		c, err := a.dial()
		if err != nil {
			return err
		}
		defer c.conn.Close()
		return a.explain(body(cmd, args, c))
	}
}

func (a *app) explain(err error) error {
	if st, ok := grpcStatus(err); ok && st.Code() == codes.Unauthenticated {
		return &exitError{code: ExitDenied, msg: fmt.Sprintf("not authenticated at %s: %s (give --token or --cert/--key, or peloton context use NAME)", a.addr, st.Message())}
	}
	if st, ok := grpcStatus(err); ok && st.Code() == codes.Unavailable {
		hint := "is it running? Set --addr or PELOTON_ADDR."
		if !a.tls {
			hint = "is it running, and does it use TLS (then give --ca)? Set --addr or PELOTON_ADDR."
		}
		return &exitError{code: ExitUnavailable, msg: fmt.Sprintf("cannot reach the peloton server at %s (%s); %s", a.addr, unavailableReason(st.Message()), hint)}
	}
	return err
}

// unavailableReason keeps the last clause of a gRPC transport message:
// `connection error: desc = "transport: Error while dialing: dial tcp
// 127.0.0.1:1: connect: connection refused"` becomes "connection refused".
func unavailableReason(msg string) string {
	msg = strings.TrimRight(msg, `"`)
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}

func (a *app) checkOutput() error {
	switch a.output {
	case "table", "json", "yaml":
		return nil
	}
	return &exitError{code: ExitError, msg: fmt.Sprintf("unknown output format %q (want table, json or yaml)", a.output)}
}

// rpc bounds one unary call.
func (a *app) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.rpcTimeout)
}

// sleep waits d on the app's clock, or until ctx ends.
func (a *app) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-a.clock.After(d):
		return nil
	}
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
