package testkit

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/peloton-federated/peloton/hostmgr-mesos/mesostest"
)

// MesosMaster is an emulated Mesos master served on a loopback port.
type MesosMaster struct {
	*mesostest.Master
	URL  string
	stop func()
}

// ServeMesos serves an emulated master with cfg and agents until Stop or
// the test's end; its loop and its HTTP server stop with their context
// and are waited for, and an error of theirs fails the test.
func ServeMesos(t testing.TB, cfg mesostest.Config, agents ...mesostest.AgentSpec) *MesosMaster {
	t.Helper()
	m := mesostest.New(cfg)
	if err := m.AddAgents(agents...); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- m.Run(ctx) }()
	go func() { defer wg.Done(); errs <- srv.Serve(l) }()
	var once sync.Once
	mm := &MesosMaster{Master: m, URL: "http://" + l.Addr().String()}
	mm.stop = func() {
		once.Do(func() {
			cancel()
			srv.Close()
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
					t.Errorf("mesos master emulator: %v", err)
				}
			}
		})
	}
	t.Cleanup(mm.stop)
	return mm
}

// Stop stops the master and waits for it.
func (m *MesosMaster) Stop() { m.stop() }
