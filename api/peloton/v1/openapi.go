package pelotonv1

import (
	_ "embed"
	"encoding/json"
	"slices"
)

// OpenAPI is the OpenAPI (Swagger 2.0) document of the HTTP/JSON API: the
// one generated from the protobuf definitions and http.yaml by `make
// proto` (peloton.swagger.json), with what the generator cannot know
// added by postProcessOpenAPI.
var OpenAPI = postProcessOpenAPI(generatedOpenAPI)

//go:embed peloton.swagger.json
var generatedOpenAPI []byte

// RequiredFields are the fields the server refuses a message without,
// wherever the message appears (request or response), by OpenAPI
// definition and JSON name. Fields required in one use only (a task's
// command without a container, the task of a spec that listings leave
// out) are not listed. TestRequiredFieldsAreRequired checks each against
// the validator.
var RequiredFields = map[string][]string{
	"v1JobSpec":          {"name"},
	"v1PoolSpec":         {"path"},
	"v1Container":        {"image"},
	"v1InstanceOverride": {"instances", "task"},
	"v1PortSpec":         {"name"},
	"v1SpreadSpec":       {"label", "max"},
	"v1Volume":           {"name", "path", "sizeMb"},
}

// unboundedNumbers are response fields that hold "Infinity" (the proto3
// JSON form of an infinite double) when there is no bound: a pool's
// unlimited limit. Their schemas say so instead of "type: number", which
// Swagger 2.0 cannot widen to "number or that string".
var unboundedNumbers = map[string][]string{"v1PoolResource": {"limit"}}

// postProcessOpenAPI marks the required fields and forbids unknown ones:
// the server refuses a field it does not know (protojson with
// DiscardUnknown off), so every message's schema says
// additionalProperties: false. Maps keep their value schemas. A document
// that cannot be read is returned as it is (the tests read it).
func postProcessOpenAPI(doc []byte) []byte {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return doc
	}
	defs, _ := d["definitions"].(map[string]any)
	for name, raw := range defs {
		def, ok := raw.(map[string]any)
		if !ok || def["type"] != "object" {
			continue
		}
		if _, has := def["additionalProperties"]; !has {
			def["additionalProperties"] = false
		}
		props, _ := def["properties"].(map[string]any)
		for _, f := range unboundedNumbers[name] {
			if p, ok := props[f].(map[string]any); ok {
				delete(p, "type")
				delete(p, "format")
				p["description"] = "A number, or the string \"Infinity\" when unbounded."
			}
		}
		var req []string
		for _, f := range RequiredFields[name] {
			if _, ok := props[f]; ok {
				req = append(req, f)
			}
		}
		if len(req) > 0 {
			slices.Sort(req)
			def["required"] = req
		}
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return doc
	}
	return out
}
