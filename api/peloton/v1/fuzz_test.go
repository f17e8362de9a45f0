package pelotonv1

import "testing"

// FuzzDecodeJobSpec feeds the JSON spec decoder anything: it must never
// panic, fail only with a *SpecError, and accept only valid specs. The
// corpus is in testdata/fuzz/FuzzDecodeJobSpec.
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
	})
}
