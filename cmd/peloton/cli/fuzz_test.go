package cli

import (
	"os"
	"path/filepath"
	"testing"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// FuzzParseJobSpec feeds the YAML/JSON job loader anything: it must never
// panic, and a spec it accepts must be valid and read back the same from
// its protobuf JSON. The corpus is in testdata/fuzz/FuzzParseJobSpec; the
// examples are seeds too.
func FuzzParseJobSpec(f *testing.F) {
	examples, _ := filepath.Glob("../../../examples/*.yaml")
	for _, path := range examples {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseJobSpec(data)
		if err != nil {
			if _, ok := err.(*pelotonv1.SpecError); !ok {
				t.Fatalf("error of type %T, want *SpecError: %v", err, err)
			}
			return
		}
		if problems := pelotonv1.ValidateJobSpec(spec); len(problems) > 0 {
			t.Fatalf("accepted a spec with problems: %v", problems)
		}
		js, err := protojson.Marshal(spec)
		if err != nil {
			t.Fatalf("marshal an accepted spec: %v", err)
		}
		again, err := ParseJobSpec(js)
		if err != nil {
			t.Fatalf("an accepted spec does not read back from %s: %v", js, err)
		}
		if !proto.Equal(spec, again) {
			t.Fatalf("read back differently:\n%v\n%v", spec, again)
		}
	})
}
