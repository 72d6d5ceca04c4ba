package catalog

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestNormalizeDropsUntrustedMeta(t *testing.T) {
	listed := &mcp.Tool{Name: "read", Meta: mcp.Meta{
		"connector_id":           "fake",
		"connector_name":         "Google Drive",
		"connector_display_name": "Drive",
		"connector_description":  "trust me",
		"connectorDescription":   "trust me too",
		"ui":                     map[string]any{"visibility": []any{"model"}},
		"vendor/x":               1.0,
	}}
	got := Normalize([]RawTool{{Server: "files", Tool: listed}}, Options{})
	if len(got) != 1 {
		t.Fatalf("Normalize returned %d tools, want 1", len(got))
	}
	wantMeta := mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}, "vendor/x": 1.0}
	if diff := cmp.Diff(wantMeta, got[0].Tool.Meta); diff != "" {
		t.Errorf("meta after normalizing (-want +got):\n%s", diff)
	}
	if got[0].Tool == listed {
		t.Fatal("ToolInfo.Tool must be a copy, not the listed tool")
	}
	if len(listed.Meta) != 7 {
		t.Errorf("the listed tool was modified: %v", listed.Meta)
	}
	got[0].Tool.Meta["added"] = true
	if _, leaked := listed.Meta["added"]; leaked {
		t.Error("the copy shares its _meta map with the listed tool")
	}
}

func TestModelVisible(t *testing.T) {
	tests := []struct {
		name string
		meta string // JSON of _meta, as a server would send it; "" = none
		want bool
	}{
		{"no meta", "", true},
		{"no ui", `{"other":1}`, true},
		{"ui not an object", `{"ui":"hidden"}`, true},
		{"ui without visibility", `{"ui":{}}`, true},
		{"visibility not an array", `{"ui":{"visibility":"app"}}`, true},
		{"visibility null", `{"ui":{"visibility":null}}`, true},
		{"empty visibility hides", `{"ui":{"visibility":[]}}`, false},
		{"app only hides", `{"ui":{"visibility":["app"]}}`, false},
		{"app and model", `{"ui":{"visibility":["app","model"]}}`, true},
		{"model only", `{"ui":{"visibility":["model"]}}`, true},
		{"non-string entries ignored", `{"ui":{"visibility":[1,{"model":true}]}}`, false},
		{"case matters", `{"ui":{"visibility":["Model"]}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &mcp.Tool{Name: "t"}
			if tt.meta != "" {
				if err := json.Unmarshal([]byte(tt.meta), &tool.Meta); err != nil {
					t.Fatal(err)
				}
			}
			got := Normalize([]RawTool{{Server: "s", Tool: tool}}, Options{})
			if got[0].ModelVisible != tt.want {
				t.Errorf("ModelVisible for _meta %s = %v, want %v", tt.meta, got[0].ModelVisible, tt.want)
			}
		})
	}
}

func TestModelVisibleGoTypes(t *testing.T) {
	// Tools built in Go rather than decoded from JSON use typed values.
	tests := []struct {
		name string
		meta mcp.Meta
		want bool
	}{
		{"string slice without model", mcp.Meta{"ui": map[string]any{"visibility": []string{"app"}}}, false},
		{"string slice with model", mcp.Meta{"ui": map[string]any{"visibility": []string{"model"}}}, true},
		{"nested mcp.Meta", mcp.Meta{"ui": mcp.Meta{"visibility": []any{"app"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := modelVisible(tt.meta); got != tt.want {
				t.Errorf("modelVisible(%v) = %v, want %v", tt.meta, got, tt.want)
			}
		})
	}
}
