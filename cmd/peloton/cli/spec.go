package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"sigs.k8s.io/yaml"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway"
)

// maxSpecBytes bounds how much of a spec file is read: enough for a job
// with an instance override per instance.
const maxSpecBytes = 32 << 20

// LoadJobSpec reads a job spec in YAML or JSON from path ("-" reads stdin)
// and decodes and validates it. On a bad spec the error is a
// *pelotonv1.SpecError listing every problem.
func LoadJobSpec(path string, stdin io.Reader) (*pelotonv1.JobSpec, error) {
	data, err := readSpec(path, stdin)
	if err != nil {
		return nil, err
	}
	return ParseJobSpec(data)
}

// readSpec reads a spec file ("-" for stdin), bounded in size.
func readSpec(path string, stdin io.Reader) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxSpecBytes+1))
	} else {
		data, err = readLimited(path)
	}
	if err != nil {
		return nil, err
	}
	if len(data) > maxSpecBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, maxSpecBytes>>20)
	}
	return data, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
}

// LoadPoolSpec reads a pool spec in YAML or JSON from path ("-" reads
// stdin) and decodes and validates it on its own.
func LoadPoolSpec(path string, stdin io.Reader) (*pelotonv1.PoolSpec, error) {
	data, err := readSpec(path, stdin)
	if err != nil {
		return nil, err
	}
	js, err := specJSON(data, (&pelotonv1.PoolSpec{}).ProtoReflect().Descriptor())
	if err != nil {
		return nil, err
	}
	return pelotonv1.DecodePoolSpec(js)
}

// ParseJobSpec decodes a YAML or JSON job spec (JSON is YAML) and validates it.
func ParseJobSpec(data []byte) (*pelotonv1.JobSpec, error) {
	js, err := specJSON(data, (&pelotonv1.JobSpec{}).ProtoReflect().Descriptor())
	if err != nil {
		return nil, err
	}
	return pelotonv1.DecodeJobSpec(js)
}

// specJSON is a spec file (of the spec message) as JSON. A JSON file is
// read as the HTTP API reads a request body: a key given twice in one
// object (which decoders take last-wins) or a string that is not UTF-8 is
// refused with its path. It needs no conversion, which costs seconds for
// a spec of 100,000 overrides. Anything else is read as YAML.
func specJSON(data []byte, spec protoreflect.MessageDescriptor) ([]byte, error) {
	if json.Valid(data) {
		if problems := gateway.SpecJSONProblems(data, spec); len(problems) > 0 {
			return nil, &pelotonv1.SpecError{Problems: problems}
		}
		return data, nil
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &pelotonv1.SpecError{Problems: []pelotonv1.FieldError{{Message: "not valid YAML or JSON: " + strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")}}}
	}
	return js, nil
}

// specProblems formats a spec error for the user: a headline naming the
// file, then one indented line per problem.
func specProblems(path string, err error) error {
	return specProblemsOf("job", path, err)
}

func specProblemsOf(kind, path string, err error) error {
	var se *pelotonv1.SpecError
	if !errors.As(err, &se) {
		return &exitError{code: ExitError, msg: fmt.Sprintf("cannot read %s spec: %v", kind, err)}
	}
	name := path
	if name == "-" {
		name = "stdin"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not a valid %s spec (%d problem%s):", name, kind, len(se.Problems), plural(len(se.Problems)))
	for _, line := range strings.Split(se.Error(), "\n") {
		b.WriteString("\n  " + line)
	}
	return &exitError{code: ExitError, msg: b.String()}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
