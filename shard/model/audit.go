package model

import "time"

// AuditRecord is one mutating API call as a region's gateway saw it: who,
// what, on what, and how it ended.
type AuditRecord struct {
	Time time.Time
	// Name and Method say who: a token's or certificate's name and how it
	// was authenticated; ForwardedBy is the region that forwarded the call
	// on the caller's behalf.
	Name        string
	Method      string
	ForwardedBy string
	// RPC is the full method name; Action what it maps to.
	RPC    string
	Action string
	// Resource names what it acted on: "job <id>", "pool /a", ...
	Resource string
	// Code is the gRPC code name it ended with; Message the error's.
	Code    string
	Message string
	// Region is the region whose gateway recorded it.
	Region string
}
