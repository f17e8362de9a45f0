package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// selfService serves AuthService and AuditService from the gateway
// itself: they are about this gateway's view of the caller.
type selfService struct {
	pb.UnimplementedAuthServiceServer
	pb.UnimplementedAuditServiceServer
	g *guard
}

func (s *selfService) WhoAmI(ctx context.Context, _ *pb.WhoAmIRequest) (*pb.WhoAmIResponse, error) {
	id, _ := auth.FromContext(ctx)
	out := &pb.WhoAmIResponse{Name: id.Name, Method: id.Method, ForwardedBy: id.ForwardedBy, Authentication: s.g.auth != nil}
	if s.g.auth == nil {
		out.Roles = []string{"everything (authentication is off)"}
		return out, nil
	}
	out.Roles = s.g.auth.Policy.At(s.g.now()).RolesOf(id)
	return out, nil
}

func (s *selfService) CanI(ctx context.Context, req *pb.CanIRequest) (*pb.CanIResponse, error) {
	action := auth.Action(req.GetAction())
	if !slices.Contains(auth.Actions, action) {
		names := make([]string, len(auth.Actions))
		for i, a := range auth.Actions {
			names[i] = string(a)
		}
		return nil, status.Errorf(codes.InvalidArgument, "action: unknown action %q (actions: %s)", req.GetAction(), strings.Join(names, ", "))
	}
	if s.g.auth == nil {
		return &pb.CanIResponse{Allowed: true, Reason: "authentication is off: every call is allowed"}, nil
	}
	id, _ := auth.FromContext(ctx)
	policy := s.g.auth.Policy.At(s.g.now())
	var pools []string
	if req.GetPool() != "" {
		pools = []string{req.GetPool()}
	}
	d := auth.Decide(policy, id, action, pools)
	if d.NeedPools && req.GetJobId() != "" && s.g.jobPool != nil {
		pool, err := s.g.jobPool(ctx, req.GetJobId())
		if err != nil {
			return nil, err
		}
		d = auth.Decide(policy, id, action, append([]string{pool}, pools...))
	}
	if d.NeedPools {
		return &pb.CanIResponse{Reason: "depends on the pool: ask with --pool or --job"}, nil
	}
	return &pb.CanIResponse{Allowed: d.Allowed, Reason: d.Reason}, nil
}

func (s *selfService) GetPolicy(ctx context.Context, _ *pb.GetPolicyRequest) (*pb.GetPolicyResponse, error) {
	if s.g.auth == nil {
		return nil, status.Error(codes.FailedPrecondition, "authentication is off: no policy applies")
	}
	return &pb.GetPolicyResponse{Policy: s.policyDocument()}, nil
}

func (s *selfService) SetPolicy(ctx context.Context, req *pb.SetPolicyRequest) (*pb.SetPolicyResponse, error) {
	if s.g.auth == nil {
		return nil, status.Error(codes.FailedPrecondition, "authentication is off: no policy applies")
	}
	policies := s.g.auth.Policy
	if !policies.Editable() || s.g.auth.PolicyStore == nil {
		_, source := policies.Source(s.g.now())
		return nil, status.Errorf(codes.FailedPrecondition, "this region's policy is the %s (auth.policySource: file): edit the file, or set auth.policySource: store", source)
	}
	if strings.TrimSpace(req.GetPolicy()) == "" {
		return nil, status.Error(codes.InvalidArgument, "policy: empty; give the bindings as a policy file holds them")
	}
	id, _ := auth.FromContext(ctx)
	pol, err := auth.CheckNewPolicy([]byte(req.GetPolicy()), id)
	if errors.Is(err, auth.ErrLockout) {
		return nil, status.Errorf(codes.FailedPrecondition, "policy: %v", err)
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "policy: %v", err)
	}
	sp := &auth.StoredPolicy{YAML: req.GetPolicy(), SetBy: id.Name, SetAt: s.g.now().UTC(), Policy: pol}
	if err := s.g.auth.PolicyStore.SavePolicy(ctx, sp); err != nil {
		return nil, status.Errorf(codes.Unavailable, "storing the policy: %v", err)
	}
	policies.SetStored(sp)
	return &pb.SetPolicyResponse{Policy: s.policyDocument()}, nil
}

// policyDocument describes the policy in force.
func (s *selfService) policyDocument() *pb.PolicyDocument {
	policies := s.g.auth.Policy
	pol, source := policies.Source(s.g.now())
	doc := &pb.PolicyDocument{Source: source, Editable: policies.Editable() && s.g.auth.PolicyStore != nil}
	if sp := policies.Stored(); sp != nil && source == "store" {
		doc.Yaml, doc.SetBy, doc.SetAt = sp.YAML, sp.SetBy, timestamppb.New(sp.SetAt)
		return doc
	}
	doc.Yaml = auth.PolicyYAML(pol)
	return doc
}

func (s *selfService) ListAudit(ctx context.Context, req *pb.ListAuditRequest) (*pb.ListAuditResponse, error) {
	if s.g.audit == nil {
		return nil, status.Error(codes.FailedPrecondition, "this region's store keeps no audit log")
	}
	if req.GetLimit() > 10000 {
		return nil, status.Error(codes.InvalidArgument, "limit: at most 10000")
	}
	recs, err := s.g.audit.List(ctx, req)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "audit log: %v", err)
	}
	return &pb.ListAuditResponse{Records: recs}, nil
}
