package pelotonv1

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MoveInto makes reply hold what resp holds, for a call served in
// process through a gRPC client interface. Both are messages of the same
// type; reply shares resp's fields rather than copying them, since resp is
// not used again.
func MoveInto(reply, resp any) error {
	dst, ok1 := reply.(proto.Message)
	src, ok2 := resp.(proto.Message)
	if !ok1 || !ok2 {
		return status.Errorf(codes.Internal, "answer of type %T cannot fill %T", resp, reply)
	}
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	if d.Descriptor().FullName() != s.Descriptor().FullName() {
		return status.Errorf(codes.Internal, "answer %s cannot fill %s", s.Descriptor().FullName(), d.Descriptor().FullName())
	}
	if !s.IsValid() { // a nil answer: an empty message
		return nil
	}
	if d.Type() != s.Type() {
		proto.Merge(dst, src)
		return nil
	}
	s.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		d.Set(fd, v)
		return true
	})
	if u := s.GetUnknown(); len(u) > 0 {
		d.SetUnknown(u)
	}
	return nil
}
