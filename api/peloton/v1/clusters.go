package pelotonv1

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxPolicyClusters bounds each list of a cluster policy.
const MaxPolicyClusters = 64

// clusterRef is a cluster as policies and migrations name it: its name,
// or its kind and name ("mesos:dc1").
var clusterRef = regexp.MustCompile(`^([a-z][a-z0-9-]*:)?[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ClusterRefProblem says what is wrong with a cluster reference, or "".
func ClusterRefProblem(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 128:
		return "must be at most 128 characters"
	case !clusterRef.MatchString(s):
		return fmt.Sprintf("%q is not a cluster name such as dc1 or mesos:dc1", s)
	}
	return ""
}

// clusterName is the name part of a cluster reference.
func clusterName(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// ClusterPolicyProblems checks a cluster policy at path ("clusters"): each
// entry a cluster reference, no cluster named twice, none both preferred
// and avoided.
func ClusterPolicyProblems(path string, p *ClusterPolicy) []FieldError {
	if p == nil {
		return nil
	}
	var out []FieldError
	seen := map[string]string{}
	for _, list := range []struct {
		name    string
		entries []string
	}{{"prefer", p.GetPrefer()}, {"avoid", p.GetAvoid()}} {
		if len(list.entries) > MaxPolicyClusters {
			out = append(out, FieldError{Path: path + "." + list.name, Message: fmt.Sprintf("must name at most %d clusters", MaxPolicyClusters)})
			continue
		}
		for i, c := range list.entries {
			at := fmt.Sprintf("%s.%s[%d]", path, list.name, i)
			if msg := ClusterRefProblem(c); msg != "" {
				out = append(out, FieldError{Path: at, Message: msg})
				continue
			}
			n := clusterName(c)
			switch prev, ok := seen[n]; {
			case ok && strings.HasPrefix(prev, path+"."+list.name+"["):
				out = append(out, FieldError{Path: at, Message: fmt.Sprintf("cluster %s is named twice (also %s)", n, prev)})
			case ok:
				out = append(out, FieldError{Path: at, Message: fmt.Sprintf("cluster %s is both preferred and avoided (%s)", n, prev)})
			default:
				seen[n] = at
			}
		}
	}
	return out
}
