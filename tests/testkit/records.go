package testkit

import "strings"

// Job is a job as the HTTP API writes it, with the fields tests read.
type Job struct {
	ID   string `json:"id"`
	Spec struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"spec"`
	Status JobStatus `json:"status"`
}

// JobStatus is a job's status.
type JobStatus struct {
	State      string         `json:"state"`
	Message    string         `json:"message"`
	Region     string         `json:"region"`
	TaskStates map[string]int `json:"taskStates"`
}

// Task is a task as the HTTP API and `peloton task list -o json` write
// it.
type Task struct {
	Instance   uint32            `json:"instance"`
	State      string            `json:"state"`
	Goal       string            `json:"goalState"`
	Run        uint32            `json:"run"`
	Host       string            `json:"host"`
	Cluster    string            `json:"cluster"`
	PinnedHost string            `json:"pinnedHost"`
	Health     string            `json:"health"`
	Ready      string            `json:"ready"`
	Ports      map[string]uint32 `json:"ports"`
	ExitCode   int32             `json:"exitCode"`
	Reason     string            `json:"reason"`
	Message    string            `json:"message"`
	// ConfigVersion is a uint64, which protobuf JSON writes as a string.
	ConfigVersion string `json:"configVersion"`
}

// HostID is the id of the task's host, as host commands take it.
func (t Task) HostID() string {
	if t.Host == "" || strings.Contains(t.Host, "/") {
		return t.Host
	}
	return t.Cluster + "/" + t.Host
}

// Available mirrors the SLA's rule: running, and ready (or, with no
// readiness probe, healthy) when the task has probes.
func (t Task) Available() bool {
	if t.State != "TASK_STATE_RUNNING" {
		return false
	}
	switch {
	case t.Ready != "" && t.Ready != "HEALTH_STATE_UNSPECIFIED":
		return t.Ready == "HEALTH_STATE_HEALTHY"
	case t.Health != "" && t.Health != "HEALTH_STATE_UNSPECIFIED":
		return t.Health == "HEALTH_STATE_HEALTHY"
	}
	return true
}
