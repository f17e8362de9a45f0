package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// routeTable is the HTTP/JSON API's routes as its OpenAPI document lists
// them: which methods a path takes, and for each the body it carries.
// Nothing here is written by hand: a route added to http.yaml appears
// after `make proto`.
type routeTable struct {
	routes []apiRoute
	// defs are the document's schema definitions, by name.
	defs map[string]*schema
}

type apiRoute struct {
	template string
	pattern  *regexp.Regexp
	ops      map[string]apiOp // by HTTP method
}

// apiOp is one operation of a route.
type apiOp struct {
	id string
	// body is the schema of the request body; nil when there is none.
	body *schema
	// spec: the body is a job spec, or carries job specs (CreateJobs),
	// which may run to tens of MB.
	spec bool
	// pathParams are the names of the path's parameters: the API also
	// reads them from a body that is the whole request (body "*").
	pathParams map[string]bool
	// ownDecoder: the body is decoded by a decoder that reports unknown
	// fields itself, with every other problem of the body at once (job
	// and pool specs).
	ownDecoder bool
}

// schema is the part of an OpenAPI (Swagger 2.0) schema object the
// gateway reads.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*schema `json:"properties"`
	Items                *schema            `json:"items"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Required             []string           `json:"required"`
}

// additional is the schema of a map's values, nil when the object is not
// a map.
func (s *schema) additional() *schema {
	if len(s.AdditionalProperties) == 0 || s.AdditionalProperties[0] != '{' {
		return nil
	}
	var out schema
	if json.Unmarshal(s.AdditionalProperties, &out) != nil {
		return nil
	}
	return &out
}

// The OpenAPI names of the JobSpec and PoolSpec messages.
const (
	jobSpecDefinition  = "#/definitions/v1JobSpec"
	poolSpecDefinition = "#/definitions/v1PoolSpec"
)

// carriesJobSpecs reports whether a body is a job spec, or a message with
// a list of them (CreateJobs).
func carriesJobSpecs(s *schema, defs map[string]*schema) bool {
	if s == nil {
		return false
	}
	if s.Ref == jobSpecDefinition {
		return true
	}
	if s.Ref != "" {
		s = defs[strings.TrimPrefix(s.Ref, "#/definitions/")]
	}
	if s == nil {
		return false
	}
	for _, p := range s.Properties {
		if p.Ref == jobSpecDefinition || (p.Items != nil && p.Items.Ref == jobSpecDefinition) {
			return true
		}
	}
	return false
}

// loadRoutes reads the routes of an OpenAPI (Swagger 2.0) document.
func loadRoutes(doc []byte) (*routeTable, error) {
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name    string  `json:"name"`
				In      string  `json:"in"`
				Pattern string  `json:"pattern"`
				Schema  *schema `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
		Definitions map[string]*schema `json:"definitions"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	t := &routeTable{defs: d.Definitions}
	templates := make([]string, 0, len(d.Paths))
	for p := range d.Paths {
		templates = append(templates, p)
	}
	slices.Sort(templates)
	for _, tmpl := range templates {
		r := apiRoute{template: tmpl, ops: map[string]apiOp{}}
		multi := map[string]bool{} // parameters that span segments ({path=**})
		for method, op := range d.Paths[tmpl] {
			o := apiOp{id: op.OperationID}
			for _, p := range op.Parameters {
				switch p.In {
				case "path":
					if p.Pattern == ".+" {
						multi[p.Name] = true
					}
					if o.pathParams == nil {
						o.pathParams = map[string]bool{}
					}
					o.pathParams[p.Name] = true
				case "body":
					o.body = p.Schema
					o.spec = carriesJobSpecs(p.Schema, d.Definitions)
					o.ownDecoder = o.spec || (p.Schema != nil && p.Schema.Ref == poolSpecDefinition)
				}
			}
			r.ops[strings.ToUpper(method)] = o
		}
		re, err := templatePattern(tmpl, multi)
		if err != nil {
			return nil, err
		}
		r.pattern = re
		t.routes = append(t.routes, r)
	}
	return t, nil
}

// templatePattern turns "/v1/hosts/{hostId}:drain" into a regular
// expression; a parameter in multi may hold '/'.
func templatePattern(tmpl string, multi map[string]bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	rest := tmpl
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("OpenAPI path %q: unclosed {", tmpl)
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		if multi[rest[i+1:i+j]] {
			b.WriteString(".+")
		} else {
			b.WriteString("[^/]+")
		}
		rest = rest[i+j+1:]
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// match returns the operations of every route the path matches, by
// method; none when the API has no such path.
func (t *routeTable) match(path string) map[string]apiOp {
	var out map[string]apiOp
	for _, r := range t.routes {
		if !r.pattern.MatchString(path) {
			continue
		}
		if out == nil {
			out = map[string]apiOp{}
		}
		for m, op := range r.ops {
			if _, dup := out[m]; !dup {
				out[m] = op
			}
		}
	}
	return out
}

// allow is the Allow header for a path's operations.
func allow(ops map[string]apiOp) string {
	methods := []string{http.MethodOptions}
	for m := range ops {
		methods = append(methods, m)
	}
	slices.Sort(methods)
	return strings.Join(methods, ", ")
}

// resolve follows a schema's $ref.
func (t *routeTable) resolve(s *schema) *schema {
	for s != nil && s.Ref != "" {
		s = t.defs[strings.TrimPrefix(s.Ref, "#/definitions/")]
	}
	return s
}
