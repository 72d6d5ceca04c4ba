package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResourcesPromptsAndRead: `toolgate resources`, `toolgate prompts`
// and `toolgate read` show what a server offers after its filters; a
// read is recorded in the audit log, and a disabled URI is refused.
func TestResourcesPromptsAndRead(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeConfig(t, `
audit_log = "`+audit+`"
server "docs" {
  command = "MCP_DEMO"
  args = ["--resources", "3"]
  disabled_resources = ["demo://doc/00003"]
}
`)
	r := run(t, nil, "resources", "--json", "--config", cfg)
	var res struct {
		Resources []struct {
			Server, URI string
			Template    string `json:"uri_template"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 {
		t.Fatalf("resources --json: %v\n%+v", err, r)
	}
	var got []string
	for _, x := range res.Resources {
		got = append(got, x.Server+" "+x.URI+x.Template)
	}
	if strings.Join(got, ", ") != "docs demo://doc/00001, docs demo://doc/00002, docs demo://item/{id}" {
		t.Errorf("resources = %v, want two documents (00003 is disabled) and the template", got)
	}

	r = run(t, nil, "prompts", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "greet") || !strings.Contains(r.stdout, "name*") {
		t.Errorf("prompts: %+v", r)
	}

	r = run(t, nil, "read", "docs", "demo://item/42", "--config", cfg)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "item 42" {
		t.Errorf("read through the template: %+v", r)
	}
	r = run(t, nil, "read", "docs", "demo://doc/00003", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stdout, "disabled") {
		t.Errorf("reading a disabled resource: %+v, want exit 1 saying it is disabled", r)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	for _, line := range strings.Split(string(b), "\n") {
		var e struct{ Event, Kind, Server, URI, Status string }
		if json.Unmarshal([]byte(line), &e) == nil && e.Event == "tool_call_end" && e.Kind == "resource_read" {
			reads = append(reads, e.Server+" "+e.URI+" "+e.Status)
		}
	}
	if strings.Join(reads, ", ") != "docs demo://item/42 completed, docs demo://doc/00003 failed" {
		t.Errorf("audit log records reads %v, want the completed and the refused one", reads)
	}
}
