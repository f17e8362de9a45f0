package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Over HTTP a request is authorised before its body is judged, as over
// gRPC: a pool owner of /a who posts a bad spec for pool /b is refused
// (403, audited), not told what is wrong with the spec (400). The body
// must be JSON for that (a body that is not cannot name a pool: it is
// refused at once, after authentication). What else is wrong with it
// (hygiene's strict reading, the spec decoder's problems) is kept in a
// bodyCheck, the request is decoded leniently enough to name what it acts
// on, and the guard decides; only a call it allows is then refused with
// the problems (refuseInvalidBody, the last interceptor).

// bodyCheck is what is wrong with an HTTP request's body, found before the
// call is authorised.
type bodyCheck struct {
	mu sync.Mutex
	// problems are hygiene's (checkJSON), each with its JSON path.
	problems []string
	// decodeErr is the decoder's.
	decodeErr error
}

func (b *bodyCheck) setDecodeErr(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.decodeErr = err
}

// err is the refusal of the body, nil when nothing is wrong with it.
func (b *bodyCheck) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case len(b.problems) > 0:
		return status.Error(codes.InvalidArgument, "request body: "+strings.Join(b.problems, "\n"))
	case b.decodeErr != nil:
		return status.Error(codes.InvalidArgument, b.decodeErr.Error())
	}
	return nil
}

type bodyCheckKey struct{}

func withBodyCheck(ctx context.Context, b *bodyCheck) context.Context {
	return context.WithValue(ctx, bodyCheckKey{}, b)
}

// checkedBody is a request body read into memory, with its check: the
// decoder records what it finds there.
type checkedBody struct {
	*bytes.Reader
	data  []byte
	check *bodyCheck
}

func (*checkedBody) Close() error { return nil }

// bodyErr is the refusal of the HTTP body of the call of ctx, nil when
// nothing is wrong with it (or the call did not come over HTTP).
func bodyErr(ctx context.Context) error {
	if b, ok := ctx.Value(bodyCheckKey{}).(*bodyCheck); ok {
		return b.err()
	}
	return nil
}

// refuseInvalidBody refuses, once the guard allowed it, a call whose HTTP
// body had problems.
func refuseInvalidBody(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := bodyErr(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// batchBodyErr is the refusal of a call authorised item by item whose
// HTTP body had problems: the first item's refusal when every item is
// refused (the caller may do none of it), else the body's.
func batchBodyErr(ctx context.Context, refusals []error) error {
	err := bodyErr(ctx)
	if err == nil || len(refusals) == 0 {
		return err
	}
	for _, r := range refusals {
		if r == nil {
			return err
		}
	}
	return refusals[0]
}

// decodeChecked decodes a checked body into v with decode; when that
// fails, the failure is kept in the body's check and v gets what a lenient
// reading finds, so that the guard can tell what the call acts on.
func decodeChecked(body *checkedBody, v any, decode func() error) error {
	err := decode()
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	body.check.setDecodeErr(err)
	if m, ok := v.(proto.Message); ok {
		proto.Reset(m) // what the failed decode left
	}
	lenientDecode(body.data, v)
	return nil
}

// lenientDecode fills v (a message, or a pointer to a message field) from
// a JSON body with every string field it finds, recursively: enough for
// an authorisation rule (pools, job ids, paths), whatever else is wrong.
func lenientDecode(data []byte, v any) {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return
	}
	if m, ok := v.(proto.Message); ok {
		fillStrings(m.ProtoReflect(), obj, 0)
		return
	}
	// A pointer to a message field (**pb.JobSpec): allocate it.
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Pointer {
		return
	}
	fresh := reflect.New(rv.Elem().Type().Elem())
	m, ok := fresh.Interface().(proto.Message)
	if !ok {
		return
	}
	fillStrings(m.ProtoReflect(), obj, 0)
	rv.Elem().Set(fresh)
}

// fillStrings sets m's string fields, and those of its message fields and
// lists of messages, from obj; anything else is left out.
func fillStrings(m protoreflect.Message, obj map[string]any, depth int) {
	if depth > maxJSONDepth {
		return
	}
	fields := m.Descriptor().Fields()
	for key, val := range obj {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(key))
		}
		if fd == nil || fd.IsMap() {
			continue
		}
		switch {
		case fd.Kind() == protoreflect.StringKind && !fd.IsList():
			if s, ok := val.(string); ok {
				m.Set(fd, protoreflect.ValueOfString(s))
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsList():
			if o, ok := val.(map[string]any); ok {
				fillStrings(m.Mutable(fd).Message(), o, depth+1)
			}
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			items, _ := val.([]any)
			list := m.Mutable(fd).List()
			for _, it := range items {
				o, _ := it.(map[string]any)
				e := list.NewElement()
				fillStrings(e.Message(), o, depth+1)
				list.Append(e)
			}
		}
	}
}
