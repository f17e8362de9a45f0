package service

import (
	"fmt"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// maxFitProblems bounds how many oversized overrides one answer names.
const maxFitProblems = 20

// fitProblems refuses a spec whose task, or an instance's override, asks
// for more than any host of the region has: such a task would wait
// forever.
func (s *api) fitProblems(spec *pb.JobSpec) error {
	shapes := s.engine.Hosts().Shapes()
	if len(shapes) == 0 {
		return nil
	}
	var problems []pb.FieldError
	check := func(path string, r model.Resources) {
		if field, msg, ok := hostmgr.Oversize(r, shapes); !ok && len(problems) < maxFitProblems {
			if field != "" {
				path += "." + field
			}
			problems = append(problems, pb.FieldError{Path: path, Message: msg})
		}
	}
	base := resourcesToModel(spec.GetTask().GetResources())
	check("task.resources", base)
	for i, o := range spec.GetOverrides() {
		if o.GetTask().GetResources() == nil {
			continue
		}
		ov := model.InstanceOverride{Task: model.TaskSpec{Resources: resourcesToModel(o.GetTask().GetResources())}}
		check(fmt.Sprintf("overrides[%d].task.resources", i), ov.MergeResources(base))
	}
	return pb.NewSpecError(problems)
}
