package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newMesosEmulatorCommand) }

type emulatorOptions struct {
	listen      string
	agents      int
	cpu, mem    float64
	disk        float64
	gpus        float64
	gpuAgents   int
	prefix      string
	zones       string
	heartbeat   time.Duration
	allocation  time.Duration
	taskRuntime time.Duration
}

// newMesosEmulatorCommand runs the Mesos master emulator as its own
// process, for trying the Mesos host manager without a Mesos cluster.
func newMesosEmulatorCommand() *cobra.Command {
	o := emulatorOptions{}
	cmd := &cobra.Command{
		Use:    "mesos-emulator",
		Short:  "Run an emulated Mesos master (v1 scheduler HTTP API) with simulated agents",
		Hidden: true,
		Long: `mesos-emulator serves POST /api/v1/scheduler like a Mesos master, with
--agents simulated agents. Tasks run for their PELOTON_SIM_DURATION and end
with their PELOTON_SIM_EXIT_CODE; health checks pass unless
PELOTON_SIM_HEALTHY=false. POST /emulator/agents/<id>/remove removes an
agent; POST /emulator/agents/<id>/partition makes it unreachable,
/reconnect brings it back and /gone marks it gone by an operator;
POST /emulator/agents/<id>/maintenance starts its maintenance;
POST /emulator/agents/<id>/health?healthy=false fails the health checks of
its tasks (true restores them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMesosEmulator(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:5050", "listen address")
	f.IntVar(&o.agents, "agents", 10, "number of agents")
	f.Float64Var(&o.cpu, "cpu", 8, "CPUs per agent")
	f.Float64Var(&o.mem, "mem", 32768, "memory MiB per agent")
	f.Float64Var(&o.disk, "disk", 102400, "disk MiB per agent")
	f.Float64Var(&o.gpus, "gpus", 0, "GPUs per GPU agent")
	f.IntVar(&o.gpuAgents, "gpu-agents", 0, "how many of the agents (the last ones) have --gpus GPUs")
	f.StringVar(&o.prefix, "hostname-prefix", "agent-", "agent hostname prefix")
	f.StringVar(&o.zones, "zones", "a|b|c", "values of the agents' zone attribute")
	f.DurationVar(&o.heartbeat, "heartbeat", mesostest.DefaultHeartbeatInterval, "heartbeat interval")
	f.DurationVar(&o.allocation, "allocation-interval", 100*time.Millisecond, "allocation interval")
	f.DurationVar(&o.taskRuntime, "task-duration", time.Second, "task run time without PELOTON_SIM_DURATION")
	return cmd
}

func runMesosEmulator(parent context.Context, o emulatorOptions) error {
	if o.agents <= 0 {
		return errors.New("--agents: must be > 0")
	}
	m := mesostest.New(mesostest.Config{HeartbeatInterval: o.heartbeat, AllocationInterval: o.allocation, TaskDuration: o.taskRuntime})
	zones := strings.Split(o.zones, "|")
	specs := make([]mesostest.AgentSpec, o.agents)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("%s%d", o.prefix, i),
			CPU: o.cpu, MemMB: o.mem, DiskMB: o.disk, Attributes: map[string]string{"zone": zones[i%len(zones)]}}
		if i >= o.agents-o.gpuAgents {
			specs[i].GPU = o.gpus
		}
	}
	if err := m.AddAgents(specs...); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(mesostest.Path, m)
	mux.HandleFunc("POST /emulator/agents/{id}/remove", func(w http.ResponseWriter, r *http.Request) {
		if err := m.RemoveAgent(r.PathValue("id")); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
		}
	})
	for action, f := range map[string]func(string) error{"partition": m.PartitionAgent, "reconnect": m.ReconnectAgent, "gone": m.MarkAgentGone} {
		mux.HandleFunc("POST /emulator/agents/{id}/"+action, func(w http.ResponseWriter, r *http.Request) {
			if err := f(r.PathValue("id")); err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
			}
		})
	}
	mux.HandleFunc("POST /emulator/agents/{id}/maintenance", func(w http.ResponseWriter, r *http.Request) {
		if err := m.StartMaintenance(r.PathValue("id"), time.Now(), time.Hour); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
		}
	})
	mux.HandleFunc("POST /emulator/agents/{id}/health", func(w http.ResponseWriter, r *http.Request) {
		healthy := r.URL.Query().Get("healthy") != "false"
		if err := m.SetAgentHealthy(r.PathValue("id"), healthy); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
		}
	})
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go m.Run(ctx)
	fmt.Fprintf(os.Stderr, "mesos emulator: %d agents on http://%s%s\n", o.agents, l.Addr(), mesostest.Path)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
