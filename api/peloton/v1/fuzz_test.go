package pelotonv1

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzDecodeJobSpec feeds the JSON spec decoder anything: it must never
// panic, fail only with a *SpecError, and accept only valid specs, and its
// fast path must accept only what the walk accepts, as the walk reads it.
// The corpus is in testdata/fuzz/FuzzDecodeJobSpec.
func FuzzDecodeJobSpec(f *testing.F) {
	f.Add(patch(nil))
	f.Add([]byte(`{"name":"x","instances":1e3,"task":{"command":"c","resources":{"cpu":"NaN","memMb":1}}}`))
	f.Add([]byte(`{"name":"x","type":"daemon","task":{"command":"c","resources":{"cpu":1,"memMb":1},"constraints":[{"anyOf":[{"key":"k","op":"exists"}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := DecodeJobSpec(data)
		if err != nil {
			if _, ok := err.(*SpecError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if problems := ValidateJobSpec(spec); len(problems) > 0 {
			t.Fatalf("accepted a spec with problems: %v", problems)
		}
		walked, err := decodeJobSpecWalk(data)
		if err != nil {
			t.Fatalf("accepted a spec the walk refuses: %v", err)
		}
		if !proto.Equal(spec, walked) {
			t.Fatalf("read as %v, the walk reads %v", spec, walked)
		}
	})
}

// The fast path and the walk agree on specs written in the ways users write
// them.
func TestDecodeJobSpecFastPathAgrees(t *testing.T) {
	for _, js := range []string{
		`{"name":"a","instances":2,"task":{"command":"c","resources":{"cpu":0.5,"memMb":64}}}`,
		`{"name":"a","type":"JOB_TYPE_SERVICE","instances":2,"task":{"command":"c","resources":{"cpu":0.5,"memMb":64},"constraints":[{"key":"zone","op":"CONSTRAINT_OP_IN","values":["a","b"]}]}}`,
		`{"name":"a","type":"service","instances":2,"task":{"command":"c","resources":{"cpu":0.5,"memMb":64}}}`,
		`{"name":"a","instances":2,"labels":{"k":"v"},"task":{"command":"c","env":{"A":"1"},"resources":{"cpu":0.5,"mem_mb":64}}}`,
		`{"name":"a","instances":1e1,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`,
		`{"name":"a","instances":2,"labels":null,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`,
		`{"name":"a","type":7,"instances":2,"task":{"command":"c","resources":{"cpu":1,"memMb":1}}}`,
	} {
		fast, ferr := DecodeJobSpec([]byte(js))
		walked, werr := decodeJobSpecWalk([]byte(js))
		if (ferr == nil) != (werr == nil) || ferr == nil && !proto.Equal(fast, walked) {
			t.Errorf("%s:\n fast %v %v\n walk %v %v", js, fast, ferr, walked, werr)
		}
	}
}
