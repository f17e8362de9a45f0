package core

import (
	"github.com/peloton-federated/peloton/shard/model"
)

// Event is a change of a job or a task, numbered within the region.
type Event = model.Event
