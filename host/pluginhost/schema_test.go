package pluginhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/toolgate/toolgate/sdk"
)

// testSchema exercises every type and nesting a plugin can declare.
var testSchema = &sdk.ConfigSchema{
	Attributes: []sdk.Attribute{
		{Name: "model", Type: sdk.TypeString, Required: true},
		{Name: "threshold", Type: sdk.TypeNumber, Default: json.RawMessage(`0.8`)},
		{Name: "verbose", Type: sdk.TypeBool},
		{Name: "tags", Type: sdk.ListOf(sdk.TypeString)},
		{Name: "limits", Type: sdk.MapOf(sdk.TypeNumber)},
		{Name: "extra", Type: sdk.TypeDynamic},
		{Name: "target", Type: sdk.ObjectOf(map[string]string{"host": sdk.TypeString, "port": sdk.TypeNumber})},
	},
	Blocks: []sdk.NestedBlock{
		{TypeName: "rule", Nesting: sdk.NestingList, Block: sdk.ConfigSchema{Attributes: []sdk.Attribute{
			{Name: "pattern", Type: sdk.TypeString, Required: true},
			{Name: "action", Type: sdk.TypeString, Default: json.RawMessage(`"deny"`)},
		}}},
		{TypeName: "profile", Nesting: sdk.NestingMap, Block: sdk.ConfigSchema{Attributes: []sdk.Attribute{
			{Name: "level", Type: sdk.TypeNumber},
		}}},
		{TypeName: "auth", Nesting: sdk.NestingSingle, Block: sdk.ConfigSchema{Attributes: []sdk.Attribute{
			{Name: "token_env", Type: sdk.TypeString},
		}}},
	},
}

const testBody = `model     = "m1"
tags      = ["a", "b"]
limits    = { calls = 10, "bytes" = 20 }
extra     = { any = ["thing", 1] }
target    = { host = "h", port = 22 }
rule {
  pattern = "delete_*"
}
rule {
  pattern = "rm"
  action  = "allow"
}
profile "fast" {
  level = 1
}
auth {
  token_env = "TOKEN"
}
`

func parseBody(t *testing.T, src string) hcl.Body {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "plugin.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f.Body
}

func TestDecodeConfigWithThePluginSchema(t *testing.T) {
	got, err := decodeConfig("p", parseBody(t, testBody), testSchema)
	if err != nil {
		t.Fatal(err)
	}
	var gotV, wantV any
	want := `{
		"model": "m1", "threshold": 0.8, "verbose": null,
		"tags": ["a", "b"], "limits": {"bytes": 20, "calls": 10},
		"extra": {"any": ["thing", 1]},
		"target": {"host": "h", "port": 22},
		"rule": [{"pattern": "delete_*", "action": "deny"}, {"pattern": "rm", "action": "allow"}],
		"profile": {"fast": {"level": 1}},
		"auth": {"token_env": "TOKEN"}
	}`
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func TestDecodeConfigErrorsPointAtTheSource(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		schema    *sdk.ConfigSchema
		want      string // the first error's "file:line,col: summary"
	}{
		{"missing required", `tags = []`, testSchema, `plugin.hcl:1,1-1: Missing required argument`},
		{"wrong type", "model = \"m\"\nthreshold = \"high\"", testSchema, `plugin.hcl:2,13-19: Incorrect attribute value type`},
		{"unknown attribute", "model = \"m\"\nmodle = 1", testSchema, `plugin.hcl:2,1-6: Unsupported argument`},
		{"no schema", "x = 1", nil, `plugin.hcl:1,1-2: Unsupported argument`},
		{"block missing its required attribute", "model = \"m\"\nrule {\n}", testSchema, `plugin.hcl:2,6-6: Missing required argument`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeConfig("p", parseBody(t, tt.src), tt.schema)
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want a *ConfigError", err)
			}
			d := ce.Diags.Errs()[0].(*hcl.Diagnostic)
			got := fmt.Sprintf("%s: %s", d.Subject, d.Summary)
			if got != tt.want {
				t.Errorf("first diagnostic = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNoConfigBlockDecodesAsEmptyObject(t *testing.T) {
	got, err := decodeConfig("p", nil, &sdk.ConfigSchema{Attributes: []sdk.Attribute{{Name: "n", Type: sdk.TypeNumber}}})
	if err != nil || string(got) != `{"n":null}` {
		t.Errorf("got %s, %v", got, err)
	}
	got, err = decodeConfig("p", nil, nil)
	if err != nil || string(got) != `{}` {
		t.Errorf("without a schema: got %s, %v", got, err)
	}
}

func TestUnusableSchemaIsAPluginBug(t *testing.T) {
	for _, s := range []*sdk.ConfigSchema{
		{Attributes: []sdk.Attribute{{Name: "a", Type: `"strang"`}}},
		{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeString}, {Name: "a", Type: sdk.TypeString}}},
		{Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeNumber, Default: json.RawMessage(`"x"`)}}},
		{Blocks: []sdk.NestedBlock{{TypeName: "b", Nesting: sdk.Nesting(9)}}},
	} {
		if _, err := decodeConfig("p", nil, s); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "bug in the plugin") {
			t.Errorf("schema %+v: got %v", s, err)
		}
	}
}

// TestPluginDiagnosticsMapToSourceRanges maps the attribute paths a
// plugin's Configure returns back to the user's file.
func TestPluginDiagnosticsMapToSourceRanges(t *testing.T) {
	body := parseBody(t, testBody)
	fallback := hcl.Range{Filename: "plugin.hcl", Start: hcl.Pos{Line: 99, Column: 1}, End: hcl.Pos{Line: 99, Column: 2}}
	for _, tt := range []struct {
		path []string
		want string // file:line,col-col
	}{
		{[]string{"model"}, "plugin.hcl:1,13-17"},
		{[]string{"tags", "1"}, "plugin.hcl:2,19-22"},
		{[]string{"tags", "7"}, "plugin.hcl:2,13-23"},
		{[]string{"limits", "bytes"}, "plugin.hcl:3,37-39"},
		{[]string{"limits", "calls"}, "plugin.hcl:3,23-25"},
		{[]string{"target", "port"}, "plugin.hcl:5,34-36"},
		{[]string{"rule", "1", "action"}, "plugin.hcl:11,13-20"},
		{[]string{"rule", "0"}, "plugin.hcl:6,1-5"},
		{[]string{"rule", "1"}, "plugin.hcl:9,1-5"},
		{[]string{"profile", "fast", "level"}, "plugin.hcl:14,11-12"},
		{[]string{"auth", "token_env"}, "plugin.hcl:17,15-22"},
		{[]string{"auth"}, "plugin.hcl:16,1-5"},
		{[]string{"verbose"}, "plugin.hcl:99,1-2"}, // not written: the fallback
		{nil, "plugin.hcl:99,1-2"},
	} {
		diags := pluginDiagnostics("p", []sdk.Diagnostic{{Summary: "bad", AttributePath: tt.path}}, body, testSchema, fallback)
		if got := diags[0].Subject.String(); got != tt.want {
			t.Errorf("path %v: range %s, want %s", tt.path, got, tt.want)
		}
	}
	warn := pluginDiagnostics("p", []sdk.Diagnostic{{Severity: sdk.SeverityWarning, Summary: "meh", Detail: "Fix it."}}, body, testSchema, fallback)[0]
	if warn.Severity != hcl.DiagWarning || warn.Detail != `Fix it. (Reported by plugin "p".)` {
		t.Errorf("warning = %+v", warn)
	}
	missing := pluginDiagnostics("p", []sdk.Diagnostic{{Summary: "is required", AttributePath: []string{"verbose"}}}, body, testSchema, fallback)[0]
	if missing.Summary != "verbose: is required" {
		t.Errorf("a diagnostic about an attribute not in the source must name it: %q", missing.Summary)
	}
}
