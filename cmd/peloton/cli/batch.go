package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// defaultBatchSize is how many specs one CreateJobs request carries: a
// region's default limit per request.
const defaultBatchSize = 1000

// maxDocuments bounds the documents of one spec file.
const maxDocuments = 1_000_000

// splitDocuments cuts a YAML stream into its documents at the lines that
// are a document marker ("---", alone or followed by a space or comment),
// leaving out documents that hold nothing but blanks and comments. first
// is the line each document starts on (1-based). A JSON file is one
// document.
func splitDocuments(data []byte) (docs [][]byte, first []int) {
	var cur bytes.Buffer
	start, line := 1, 0
	flush := func(next int) {
		if hasContent(cur.Bytes()) {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			first = append(first, start)
		}
		cur.Reset()
		start = next
	}
	for len(data) > 0 {
		line++
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if isDocumentMarker(l) {
			flush(line + 1)
			continue
		}
		cur.Write(l)
	}
	flush(line + 1)
	return docs, first
}

func isDocumentMarker(l []byte) bool {
	l = bytes.TrimRight(l, "\r\n")
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	rest := l[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

// hasContent reports whether a document holds more than blank lines and
// comments.
func hasContent(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return true
		}
	}
	return false
}

// LoadJobSpecs reads the job specs of a file ("-" reads stdin): one, or
// several YAML documents separated by "---" lines. Each is decoded and
// validated; on any problem the error is a *pelotonv1.SpecError naming
// every problem of every document, under "jobs[i]" for the i-th document
// (from 0) when there are several.
func LoadJobSpecs(path string, stdin io.Reader) ([]*pelotonv1.JobSpec, error) {
	data, err := readSpec(path, stdin)
	if err != nil {
		return nil, err
	}
	docs, lines := [][]byte{data}, []int{1}
	if !jsonDocument(data) {
		docs, lines = splitDocuments(data)
	}
	switch {
	case len(docs) == 0:
		return nil, &pelotonv1.SpecError{Problems: []pelotonv1.FieldError{{Message: "the file holds no job spec"}}}
	case len(docs) > maxDocuments:
		return nil, &pelotonv1.SpecError{Problems: []pelotonv1.FieldError{{Message: fmt.Sprintf("the file holds %d documents, more than %d", len(docs), maxDocuments)}}}
	case len(docs) == 1:
		spec, err := ParseJobSpec(docs[0])
		if err != nil {
			return nil, err
		}
		return []*pelotonv1.JobSpec{spec}, nil
	}
	specs := make([]*pelotonv1.JobSpec, len(docs))
	var problems []pelotonv1.FieldError
	for i, doc := range docs {
		spec, err := ParseJobSpec(doc)
		if se, ok := err.(*pelotonv1.SpecError); ok {
			for _, p := range se.Problems {
				msg := p.Message
				if p.Path == "" {
					msg = fmt.Sprintf("%s (the document at line %d)", msg, lines[i])
				}
				problems = append(problems, pelotonv1.FieldError{Path: pelotonv1.JobPath(uint32(i), p.Path), Message: msg})
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		specs[i] = spec
	}
	if err := pelotonv1.NewSpecError(problems); err != nil {
		return nil, err
	}
	return specs, nil
}

// jsonDocument reports whether data is one JSON value (a JSON spec file).
func jsonDocument(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// newRequestID is a random request id: a retry of a request sends it
// again, so that the jobs its first attempt created are not created twice.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "cli-" + hex.EncodeToString(b[:])
}

// createJobs sends specs through CreateJobs, batchSize at a time, and
// returns one result per spec, in order, with positions and paths in the
// messages counted over the whole file. A request the server could not
// take (unavailable, or shed for load) is sent again with its request id,
// and so are the specs refused as unavailable: a retry creates nothing
// twice.
func (a *app) createJobs(ctx context.Context, c *clients, specs []*pelotonv1.JobSpec, batchSize int) ([]*pelotonv1.CreateJobsResult, error) {
	out := make([]*pelotonv1.CreateJobsResult, 0, len(specs))
	for from := 0; from < len(specs); from += batchSize {
		chunk := specs[from:min(from+batchSize, len(specs))]
		req := &pelotonv1.CreateJobsRequest{RequestId: newRequestID(), Jobs: chunk}
		var results []*pelotonv1.CreateJobsResult
		for attempt := 0; ; attempt++ {
			rctx, cancel := a.rpc(ctx)
			resp, err := c.jobs.CreateJobs(rctx, req)
			cancel()
			again := attempt < maxRetries && (status.Code(err) == codes.Unavailable || err == nil && anyUnavailable(resp.GetResults()))
			if err != nil && !again {
				return nil, err
			}
			if err == nil {
				results = resp.GetResults()
				if len(results) != len(chunk) {
					return nil, fmt.Errorf("the server answered %d results for %d job specs", len(results), len(chunk))
				}
			}
			if !again {
				break
			}
			if a.sleep(ctx, retryBackoff(attempt, 0, 0.5)) != nil {
				return nil, ctx.Err()
			}
		}
		for i, r := range results {
			r.Message = renumber(r.GetMessage(), i, from+i)
		}
		out = append(out, results...)
	}
	return out, nil
}

func anyUnavailable(rs []*pelotonv1.CreateJobsResult) bool {
	for _, r := range rs {
		if codes.Code(r.GetCode()) == codes.Unavailable {
			return true
		}
	}
	return false
}

// renumber rewrites the "jobs[i]" a server message names a spec by, its
// position in its request, into its position in the file.
func renumber(msg string, inRequest, inFile int) string {
	if inRequest == inFile || msg == "" {
		return msg
	}
	return strings.ReplaceAll(msg, fmt.Sprintf("jobs[%d]", inRequest), fmt.Sprintf("jobs[%d]", inFile))
}

// printResults writes one line per spec: the job's id, or why it was
// refused; it returns an error (exit code from the first refusal) when
// any was refused.
func (a *app) printResults(cmd *cobra.Command, specs []*pelotonv1.JobSpec, results []*pelotonv1.CreateJobsResult) error {
	out := cmd.OutOrStdout()
	refused := 0
	var first codes.Code
	if a.output != "table" {
		if err := writeStructured(out, a.output, &pelotonv1.CreateJobsResponse{Results: results}); err != nil {
			return err
		}
	}
	for i, r := range results {
		if r.GetCode() != 0 {
			if refused == 0 {
				first = codes.Code(r.GetCode())
			}
			refused++
		}
		if a.output != "table" {
			continue
		}
		if r.GetCode() == 0 {
			fmt.Fprintln(out, r.GetJobId())
			continue
		}
		msg := strings.ReplaceAll(strings.TrimSpace(r.GetMessage()), "\n", "; ")
		fmt.Fprintf(out, "refused %s (%s): %s\n", specs[i].GetName(), codes.Code(r.GetCode()), msg)
	}
	if refused == 0 {
		return nil
	}
	return &exitError{code: ExitCode(status.Error(first, "")), msg: fmt.Sprintf("%d of %d jobs refused", refused, len(results))}
}
