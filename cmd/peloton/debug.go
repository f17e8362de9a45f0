package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// debugServer serves Go's profiles (net/http/pprof) on a loopback address,
// for `go tool pprof http://ADDR/debug/pprof/profile`. It never listens
// off loopback: profiles show the process's internals.
type debugServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// startDebug listens on addr and serves the profiles until stop.
func startDebug(addr string, log *slog.Logger) (*debugServer, error) {
	if !isLoopback(addr) {
		return nil, fmt.Errorf("--debug-addr %s: profiles are served on loopback addresses only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	d := &debugServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan error, 1)}
	go func() { d.done <- d.srv.Serve(ln) }()
	log.Info("profiles served", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return d, nil
}

// stop closes the listener and waits for the server to end.
func (d *debugServer) stop(ctx context.Context) error {
	err := d.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = d.srv.Close()
	}
	if serr := <-d.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// serveDebug starts the profile server when addr is set; the function it
// returns stops it (within 5 s), logging a failure.
func serveDebug(addr string, log *slog.Logger) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	d, err := startDebug(addr, log)
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.stop(ctx); err != nil {
			log.Warn("profile server stopped", "err", err)
		}
	}, nil
}
