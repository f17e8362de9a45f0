package pelotonv1

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestOpenAPIForbidsUnknownFieldsAndMarksRequired(t *testing.T) {
	var d struct {
		Definitions map[string]struct {
			Type                 string          `json:"type"`
			Properties           map[string]any  `json:"properties"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
			Required             []string        `json:"required"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(OpenAPI, &d); err != nil {
		t.Fatal(err)
	}
	for name, def := range d.Definitions {
		if def.Type != "object" {
			continue
		}
		if len(def.AdditionalProperties) == 0 {
			t.Errorf("%s: no additionalProperties", name)
		}
		if name != "protobufAny" && def.Properties != nil && string(def.AdditionalProperties) != "false" {
			t.Errorf("%s: additionalProperties %s, want false", name, def.AdditionalProperties)
		}
	}
	for name, fields := range RequiredFields {
		got := d.Definitions[name].Required
		for _, f := range fields {
			if !slices.Contains(got, f) {
				t.Errorf("%s: required %v lacks %s (is it in the document?)", name, got, f)
			}
		}
	}
	if !strings.Contains(string(OpenAPI), `"swagger": "2.0"`) {
		t.Error("the document is no longer Swagger 2.0")
	}
}

// TestRequiredFieldsAreRequired checks that the server refuses a message
// without each field the document marks required.
func TestRequiredFieldsAreRequired(t *testing.T) {
	task := `"task":{"command":"c","resources":{"cpu":1,"memMb":1}`
	stateful := `{"name":"a","type":"stateful","instances":2,` + task
	cases := []struct {
		def, field, spec, path string
	}{
		{"v1JobSpec", "name", `{"instances":1,` + task + `}}`, "name"},
		{"v1Container", "image", `{"name":"a","instances":1,` + task + `,"container":{}}}`, "task.container.image"},
		{"v1InstanceOverride", "instances", `{"name":"a","instances":2,` + task + `},"overrides":[{"task":{}}]}`, "overrides[0].instances"},
		{"v1InstanceOverride", "task", `{"name":"a","instances":2,` + task + `},"overrides":[{"instances":"1"}]}`, "overrides[0].task"},
		{"v1PortSpec", "name", `{"name":"a","instances":1,` + task + `,"ports":[{"port":80}]}}`, "task.ports[0].name"},
		{"v1SpreadSpec", "label", `{"name":"a","instances":1,` + task + `},"spread":[{"max":1}]}`, "spread[0].label"},
		{"v1SpreadSpec", "max", `{"name":"a","instances":1,` + task + `},"spread":[{"label":"zone"}]}`, "spread[0].max"},
		{"v1Volume", "name", stateful + `,"volumes":[{"path":"/d","sizeMb":1}]}}`, "task.volumes[0].name"},
		{"v1Volume", "path", stateful + `,"volumes":[{"name":"d","sizeMb":1}]}}`, "task.volumes[0].path"},
		{"v1Volume", "sizeMb", stateful + `,"volumes":[{"name":"d","path":"/d"}]}}`, "task.volumes[0].size_mb"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.def+"."+c.field] = true
		_, err := DecodeJobSpec([]byte(c.spec))
		if err == nil || !strings.Contains(err.Error(), c.path+":") {
			t.Errorf("%s without %s: %v, want a problem at %s", c.def, c.field, err, c.path)
		}
	}
	if _, err := DecodePoolSpec([]byte(`{"limit":{"cpu":1}}`)); err == nil || !strings.Contains(err.Error(), "path") {
		t.Errorf("a pool spec without path: %v", err)
	}
	covered["v1PoolSpec.path"] = true
	for name, fields := range RequiredFields {
		for _, f := range fields {
			if !covered[name+"."+f] {
				t.Errorf("required field %s.%s has no case here", name, f)
			}
		}
	}
}
