package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"sigs.k8s.io/yaml"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
)

// A policy file binds roles to names (of tokens, of client certificates):
//
//	bindings:
//	  - subjects: [alice]
//	    role: admin
//	  - subjects: [ops-oncall]
//	    role: operator
//	  - subjects: [maps-team, bob]
//	    role: pool-owner
//	    pools: [/maps]
//	  - subjects: [dashboard]
//	    role: viewer

// Role is what a binding grants.
type Role string

// The roles. RoleRegion is not bound by a policy: it is what a region's
// own certificate may do.
const (
	// RoleAdmin may do everything.
	RoleAdmin Role = "admin"
	// RoleOperator runs the federation: hosts, regions, drills and every
	// job, but not the pool tree.
	RoleOperator Role = "operator"
	// RolePoolOwner creates, updates and stops jobs in pools under its
	// pools, and edits the pools below them.
	RolePoolOwner Role = "pool-owner"
	// RoleViewer reads.
	RoleViewer Role = "viewer"
	// RoleRegion reads, replicates jobs, and creates and stops the jobs it
	// relocates or moves back.
	RoleRegion Role = "region"
)

// Action is what a call does, as roles grant it.
type Action string

// The actions.
const (
	ActRead      Action = "read"
	ActCreateJob Action = "create-job"
	ActUpdateJob Action = "update-job"
	ActStopJob   Action = "stop-job"
	ActDeleteJob Action = "delete-job"
	// ActEditPool creates, updates and deletes pools.
	ActEditPool Action = "edit-pool"
	// ActManageHost drains, undrains and takes hosts down.
	ActManageHost Action = "manage-host"
	// ActManageRegion starts drills, isolates regions and fails back.
	ActManageRegion Action = "manage-region"
	// ActReplicate stores another region's replica of a job.
	ActReplicate Action = "replicate"
	ActReadAudit Action = "read-audit"
	// ActReadPolicy reads the role bindings; ActSetPolicy replaces them.
	ActReadPolicy Action = "read-policy"
	ActSetPolicy  Action = "set-policy"
	// ActBackupStore copies a region's whole store (every job of every
	// pool): no role but admin grants it.
	ActBackupStore Action = "backup-store"
	// ActSelf asks who one is and what one may do: any authenticated
	// caller.
	ActSelf Action = "self"
	// ActPublic is open to anyone, even without credentials.
	ActPublic Action = "public"
)

// Actions are the actions a caller can ask about, in the order help lists
// them.
var Actions = []Action{ActRead, ActCreateJob, ActUpdateJob, ActStopJob, ActDeleteJob, ActEditPool, ActManageHost, ActManageRegion, ActReplicate, ActReadAudit, ActReadPolicy, ActSetPolicy, ActBackupStore}

// Reads tells whether an action only reads.
func (a Action) Reads() bool {
	return a == ActRead || a == ActReadAudit || a == ActReadPolicy || a == ActSelf || a == ActPublic
}

// poolScoped actions are granted to pool owners by pool.
func (a Action) poolScoped() bool {
	switch a {
	case ActCreateJob, ActUpdateJob, ActStopJob, ActDeleteJob, ActEditPool:
		return true
	}
	return false
}

// roleActions are the actions a role grants regardless of pools.
var roleActions = map[Role][]Action{
	RoleOperator:  {ActRead, ActReadAudit, ActReadPolicy, ActCreateJob, ActUpdateJob, ActStopJob, ActDeleteJob, ActManageHost, ActManageRegion},
	RolePoolOwner: {ActRead},
	RoleViewer:    {ActRead},
	RoleRegion:    {ActRead, ActReplicate, ActCreateJob, ActStopJob},
}

// Binding grants a role to names.
type Binding struct {
	Subjects []string `json:"subjects"`
	Role     Role     `json:"role"`
	// Pools are the subtrees a pool-owner owns.
	Pools []string `json:"pools,omitempty"`
}

// Policy is the set of bindings of a region.
type Policy struct {
	Bindings []Binding `json:"bindings"`
}

// ParsePolicy reads a policy file's content, naming the field of a
// problem.
func ParsePolicy(raw []byte) (*Policy, error) {
	var p Policy
	if err := strictYAML(raw, &p); err != nil {
		return nil, err
	}
	for i := range p.Bindings {
		b := &p.Bindings[i]
		field := fmt.Sprintf("bindings[%d]", i)
		if len(b.Subjects) == 0 {
			return nil, fmt.Errorf("%s.subjects: at least one name is required", field)
		}
		for j, s := range b.Subjects {
			if strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("%s.subjects[%d]: empty name", field, j)
			}
		}
		switch b.Role {
		case RoleAdmin, RoleOperator, RoleViewer:
			if len(b.Pools) > 0 {
				return nil, fmt.Errorf("%s.pools: only a pool-owner binding names pools", field)
			}
		case RolePoolOwner:
			if len(b.Pools) == 0 {
				return nil, fmt.Errorf("%s.pools: a pool-owner binding needs at least one pool", field)
			}
			for j, p := range b.Pools {
				if !pb.ValidPoolPath(p) {
					return nil, fmt.Errorf("%s.pools[%d]: %q is not an absolute pool path like /team", field, j, p)
				}
			}
		case RoleRegion:
			return nil, fmt.Errorf("%s.role: region is the role of region certificates, not bound by a policy", field)
		default:
			return nil, fmt.Errorf("%s.role: must be admin, operator, pool-owner or viewer, not %q", field, b.Role)
		}
	}
	return &p, nil
}

// bindingsOf returns the bindings naming name.
func (p *Policy) bindingsOf(name string) []Binding {
	if p == nil {
		return nil
	}
	var out []Binding
	for _, b := range p.Bindings {
		if slices.Contains(b.Subjects, name) {
			out = append(out, b)
		}
	}
	return out
}

// RolesOf describes the roles of an identity, such as "pool-owner /a /b".
func (p *Policy) RolesOf(id Identity) []string {
	if id.IsRegion() {
		return []string{string(RoleRegion)}
	}
	if id.Method == Anonymous {
		return nil
	}
	var out []string
	for _, b := range p.bindingsOf(id.Name) {
		out = append(out, strings.TrimSpace(string(b.Role)+" "+strings.Join(b.Pools, " ")))
	}
	return out
}

// Decision is the answer of Decide.
type Decision struct {
	Allowed bool
	// NeedPools: the answer turns on the pools acted on, which the call
	// did not give; ask again with them.
	NeedPools bool
	// Reason says which role allows it, or why nothing does, in one line.
	Reason string
}

// Decide says whether id may take action on pools (the pools a job call
// acts on: the job's, and for an update also the new spec's). pools nil
// means not known yet: when the answer depends on them, Decide returns
// NeedPools.
func Decide(p *Policy, id Identity, action Action, pools []string) Decision {
	switch {
	case action == ActPublic:
		return Decision{Allowed: true, Reason: "open to everyone"}
	case id.Method == Anonymous:
		return Decision{Reason: ErrNoCredentials.Error()}
	case action == ActSelf:
		return Decision{Allowed: true, Reason: "any authenticated caller"}
	}
	if id.IsRegion() {
		if slices.Contains(roleActions[RoleRegion], action) {
			return Decision{Allowed: true, Reason: "region " + id.Name + " (role region)"}
		}
		return Decision{Reason: fmt.Sprintf("region %s may not %s: a region's own identity may only read, replicate, and create and stop the jobs it relocates", id.Name, action)}
	}
	bindings := p.bindingsOf(id.Name)
	if len(bindings) == 0 {
		return Decision{Reason: fmt.Sprintf("%s has no role in this region's policy", id.Name)}
	}
	pooled := false
	for _, b := range bindings {
		if b.Role == RoleAdmin || slices.Contains(roleActions[b.Role], action) {
			return Decision{Allowed: true, Reason: "role " + string(b.Role)}
		}
		if b.Role == RolePoolOwner && action.poolScoped() {
			pooled = true
		}
	}
	if !pooled {
		return Decision{Reason: fmt.Sprintf("%s (%s) may not %s", id.Name, strings.Join(p.RolesOf(id), ", "), action)}
	}
	if pools == nil {
		return Decision{NeedPools: true}
	}
	for _, pool := range pools {
		owner := ownerOf(bindings, action, pool)
		if owner == "" {
			what := "pool " + pool
			if action == ActEditPool && ownerOf(bindings, ActCreateJob, pool) != "" {
				what += " (a pool owner edits the pools below its own)"
			}
			return Decision{Reason: fmt.Sprintf("%s (%s) may not %s on %s", id.Name, strings.Join(p.RolesOf(id), ", "), action, what)}
		}
	}
	return Decision{Allowed: true, Reason: "role pool-owner of " + ownerOf(bindings, action, pools[0])}
}

// ownerOf returns the pool of a pool-owner binding that grants action on
// pool, or "".
func ownerOf(bindings []Binding, action Action, pool string) string {
	pool = cleanPool(pool)
	if pool == "" {
		return ""
	}
	for _, b := range bindings {
		if b.Role != RolePoolOwner {
			continue
		}
		for _, root := range b.Pools {
			if under(pool, root) && (action != ActEditPool || pool != root) {
				return root
			}
		}
	}
	return ""
}

// cleanPool returns an absolute pool path, "" for one that is not valid
// (it then matches no subtree). An empty path is the root pool.
func cleanPool(p string) string {
	if p == "" {
		return "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if p != "/" {
		p = strings.TrimSuffix(p, "/")
	}
	if !pb.ValidPoolPath(p) {
		return ""
	}
	return p
}

// under tells whether pool is root or below it.
func under(pool, root string) bool {
	return root == "/" || pool == root || strings.HasPrefix(pool, root+"/")
}

// Policies is the policy in force in a region: a policy file, read
// again when it changes; or, when the store is the source (Editable), the
// policy set through the API and kept in the region's store, with the
// file (if any) in force until one is set.
type Policies struct {
	file     *watchedFile[*Policy] // nil: no file
	editable bool
	stored   atomic.Pointer[StoredPolicy]
}

// StoredPolicy is a policy set through the API.
type StoredPolicy struct {
	// YAML is the policy as it was set.
	YAML   string    `json:"yaml"`
	SetBy  string    `json:"setBy"`
	SetAt  time.Time `json:"setAt"`
	Policy *Policy   `json:"-"`
}

// LoadPolicy reads a policy file.
func LoadPolicy(path string, onReload func(path string, err error)) (*Policies, error) {
	w, err := loadWatched(path, ParsePolicy)
	if err != nil {
		return nil, err
	}
	w.onReload = onReload
	return &Policies{file: w}, nil
}

// StaticPolicy is a policy held in memory.
func StaticPolicy(p *Policy) *Policies {
	return &Policies{file: &watchedFile[*Policy]{value: p}}
}

// EditablePolicy is a policy kept in the store: initial (a file, may be
// nil) is in force until SetStored is given one.
func EditablePolicy(initial *Policies) *Policies {
	p := &Policies{editable: true}
	if initial != nil {
		p.file = initial.file
	}
	return p
}

// Editable tells whether the store is the source, so SetPolicy may
// change it.
func (p *Policies) Editable() bool { return p.editable }

// SetStored puts a policy set through the API in force (with an editable
// policy only).
func (p *Policies) SetStored(sp *StoredPolicy) {
	if p.editable {
		p.stored.Store(sp)
	}
}

// Stored is the policy set through the API, nil when none is.
func (p *Policies) Stored() *StoredPolicy { return p.stored.Load() }

// At returns the policy as of now.
func (p *Policies) At(now time.Time) *Policy {
	pol, _ := p.Source(now)
	return pol
}

// Source returns the policy as of now and where it comes from: "store",
// "file <path>", or "none".
func (p *Policies) Source(now time.Time) (*Policy, string) {
	if sp := p.stored.Load(); sp != nil {
		return sp.Policy, "store"
	}
	if p.file != nil {
		pol := p.file.get(now)
		if p.file.path == "" {
			return pol, "built in"
		}
		return pol, "file " + p.file.path
	}
	return nil, "none"
}

// ErrLockout: a new policy would leave the region without an admin, or
// take the admin role from the one setting it.
var ErrLockout = errors.New("the policy would lock admins out")

// CheckNewPolicy parses a policy to be set by id: it must bind the admin
// role, and keep id an admin (another admin makes a change that takes it
// away), so that someone can always change it again.
func CheckNewPolicy(raw []byte, id Identity) (*Policy, error) {
	pol, err := ParsePolicy(raw)
	if err != nil {
		return nil, err
	}
	admins := 0
	for _, b := range pol.Bindings {
		if b.Role == RoleAdmin {
			admins += len(b.Subjects)
		}
	}
	if admins == 0 {
		return nil, fmt.Errorf("%w: bindings: no admin binding, so nobody could change the policy again", ErrLockout)
	}
	for _, b := range pol.bindingsOf(id.Name) {
		if b.Role == RoleAdmin && !id.IsRegion() {
			return pol, nil
		}
	}
	return nil, fmt.Errorf("%w: it takes the admin role from %s, who sets it: ask another admin to make this change", ErrLockout, id.Name)
}

// EncodeStoredPolicy is a stored policy's value in the store.
func EncodeStoredPolicy(sp *StoredPolicy) ([]byte, error) { return json.Marshal(sp) }

// DecodeStoredPolicy reads a value EncodeStoredPolicy made, checking the
// policy again.
func DecodeStoredPolicy(raw []byte) (*StoredPolicy, error) {
	var sp StoredPolicy
	if err := json.Unmarshal(raw, &sp); err != nil {
		return nil, fmt.Errorf("stored policy: %w", err)
	}
	pol, err := ParsePolicy([]byte(sp.YAML))
	if err != nil {
		return nil, fmt.Errorf("stored policy: %w", err)
	}
	sp.Policy = pol
	return &sp, nil
}

// PolicyYAML renders a policy as YAML.
func PolicyYAML(p *Policy) string {
	if p == nil {
		p = &Policy{}
	}
	if p.Bindings == nil {
		p = &Policy{Bindings: []Binding{}}
	}
	out, err := yaml.Marshal(p)
	if err != nil {
		return ""
	}
	return string(out)
}
