package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The server config's history settings are read, and bad ones refused
// naming the field.
func TestServerConfigHistory(t *testing.T) {
	write := func(t *testing.T, history string) string {
		path := filepath.Join(t.TempDir(), "server.yaml")
		cfg := "region: east\ndataDir: /var/lib/peloton\nhosts: [\"sim\"]\nhistory: " + history + "\n"
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg, err := loadServerConfig(write(t, "{window: 72h, interval: 30s}"))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(cfg.History.Window) != 72*time.Hour || time.Duration(cfg.History.Interval) != 30*time.Second {
		t.Fatalf("history %+v", cfg.History)
	}
	for bad, want := range map[string]string{
		"{interval: 100ms}":          "history.interval: must be at least 1s",
		"{window: 10s}":              "history.window: must be at least 1m",
		"{window: 2400h}":            "history.window: must be at most 90 days",
		"{window: 1m, interval: 2m}": "history.interval: must not be longer than the window",
	} {
		if _, err := loadServerConfig(write(t, bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("history %s: %v, want %q", bad, err, want)
		}
	}
}
