package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestDebugServerOnLoopbackOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:6060", ":6060"} {
		if _, err := startDebug(addr, log); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v, want refused", addr, err)
		}
	}
	d, err := startDebug("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + d.ln.Addr().String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) == 0 {
		t.Fatalf("cmdline: %d %q", resp.StatusCode, body)
	}
	if err := d.stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}
