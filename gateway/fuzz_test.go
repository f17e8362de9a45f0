package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// FuzzCheckJSON feeds the HTTP body checks anything, against no schema and
// against the job spec's: they must never panic, accept only JSON, and on
// JSON in plain UTF-8 (no \u escapes) without a schema find nothing but
// duplicate keys and nesting. The corpus is in testdata/fuzz/FuzzCheckJSON.
func FuzzCheckJSON(f *testing.F) {
	routes, err := loadRoutes(pb.OpenAPI)
	if err != nil {
		f.Fatal(err)
	}
	spec := &schema{Ref: "#/definitions/v1JobSpec"}
	for _, seed := range []string{`{}`, `[]`, `{"a":1,"a":2}`, `{"name":"x","task":{"resources":{"cpu":"1"}}}`,
		"\"\xff\"", `"\ud800"`, `1e5`, `-0.5`, `[[[[]]]]`, `{"labels":{"k":"v"}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plain := checkJSON(data, nil, routes, false, nil)
		_ = checkJSON(data, spec, routes, false, nil)
		_ = checkJSON(data, spec, routes, true, map[string]bool{"id": true})
		if len(plain) == 0 && !json.Valid(data) {
			t.Fatalf("accepted what is not JSON: %q", data)
		}
		if json.Valid(data) && utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)) {
			for _, p := range plain {
				if !strings.Contains(p, "given twice") && !strings.Contains(p, "nested more than") {
					t.Fatalf("JSON %q: unexpected problem %q", data, p)
				}
			}
		}
	})
}
