package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/metrics"
)

// apiFamilies are the gateway's own families (gateway/metrics.go).
var apiFamilies = []string{"peloton_api_requests_total", "peloton_api_request_duration_seconds", "peloton_http_requests_total"}

// exportedFamilies is every peloton_ family the binary exports.
func exportedFamilies() map[string]bool {
	out := map[string]bool{forwardedFamily: true}
	for _, names := range [][]string{metrics.Names, regionFamilies, apiFamilies} {
		for _, n := range names {
			out[n] = true
		}
	}
	return out
}

var metricName = regexp.MustCompile(`\bpeloton_[a-z0-9_]+`)

// Every query of every dashboard in deploy/grafana names metric families
// the binary exports (a histogram's _bucket, _sum and _count included).
func TestDashboardsNameExportedMetrics(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "grafana", "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("dashboards: %v %v", files, err)
	}
	exported := exportedFamilies()
	used := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			UID    string `json:"uid"`
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.UID == "" || len(d.Panels) == 0 {
			t.Fatalf("%s: no uid or no panels", f)
		}
		for _, p := range d.Panels {
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", f, p.Title)
			}
			for _, q := range p.Targets {
				names := metricName.FindAllString(q.Expr, -1)
				if len(names) == 0 {
					t.Errorf("%s: panel %q: query %q names no peloton metric", f, p.Title, q.Expr)
				}
				for _, n := range names {
					base := n
					for _, suffix := range []string{"_bucket", "_sum", "_count"} {
						if b := strings.TrimSuffix(n, suffix); b != n && exported[b] {
							base = b
						}
					}
					if !exported[base] {
						t.Errorf("%s: panel %q: %s is not a metric the binary exports", f, p.Title, n)
					}
					used[base] = true
				}
			}
		}
	}
	// And the dashboards show every scheduler family.
	for n := range exported {
		if !used[n] && n != "peloton_http_requests_total" {
			t.Errorf("%s is on no dashboard", n)
		}
	}
}
