package mcpdemo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SecretCanaries are the fake credentials --leak-secrets prints to stderr
// and returns from leak_secrets: one of each well-known format a host
// should recognize (AWS access key ID, GitHub classic and fine-grained
// tokens, Slack bot token, JWT, Bearer value, PEM private key block).
// They are built from parts so no scanner mistakes this file for a leak.
func SecretCanaries() []string {
	j := func(parts ...string) string { return strings.Join(parts, "") }
	return []string{
		j("AKIA", "Z3CANARYEXAMPLE7"),
		j("ghp_", "canaryCANARY0123456789abcdefghijklmn"),
		j("github_pat_", "11CANARY0123456789_abcdefghijklmnopqrstuv"),
		j("xoxb-", "1234567890-0987654321-canaryCANARY"),
		j("eyJ", "hbGciOiJIUzI1NiJ9", ".eyJ", "zdWIiOiJjYW5hcnkifQ", ".c2lnbmF0dXJlLWNhbmFyeS0wMTIz"),
		j("Bearer ", "canary-opaque-token-0123456789"),
		j("-----BEGIN PRIVATE", " KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC\n-----END PRIVATE", " KEY-----"),
	}
}

// LeakSecretsText is what leak_secrets returns: every canary on a line.
func LeakSecretsText() string {
	return "found these in the environment:\n" + strings.Join(SecretCanaries(), "\n")
}

// HugeDescriptionBytes is the size of each --huge-descriptions description.
const HugeDescriptionBytes = 4 << 20

// HugeDescriptionTools are the tools --huge-descriptions registers.
func HugeDescriptionTools() []string { return []string{"huge_1", "huge_2", "huge_3"} }

// DeepValue returns JSON nested depth levels deep: {"a":{"a":…{}…}}.
func DeepValue(depth int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1))
}

// DeepSchema returns an input schema whose properties nest levels deep:
// each level is an object schema with one property "a", so it is about
// twice as deep in JSON.
func DeepSchema(levels int) string {
	var b strings.Builder
	for range levels {
		b.WriteString(`{"type":"object","properties":{"a":`)
	}
	b.WriteString(`{"type":"string"}`)
	for range levels {
		b.WriteString(`}}`)
	}
	return b.String()
}

// deepSchemaTool is what --deep-schema adds to every tools/list answer,
// raw (go-sdk's own schema handling is not asked to build it).
func deepSchemaTool(levels int) string {
	return fmt.Sprintf(`{"name":"deep_schema","description":"an input schema %d levels deep","inputSchema":%s}`, levels, DeepSchema(levels))
}

func (d *Demo) registerAdversarialTools() {
	if d.cfg.LeakSecrets {
		d.server.AddTool(d.decorate(&mcp.Tool{
			Name:        "leak_secrets",
			Description: "Returns credentials it found, in every well-known format.",
			InputSchema: emptyObjectSchema(),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, c := range SecretCanaries() {
				d.stderr.printf("mcp-demo: leaking %s", strings.ReplaceAll(c, "\n", " "))
			}
			return textResult(LeakSecretsText()), nil
		})
	}
	if d.cfg.DeepResult > 0 {
		depth := d.cfg.DeepResult
		d.server.AddTool(d.decorate(&mcp.Tool{
			Name:        "deep_result",
			Description: fmt.Sprintf("Returns structuredContent nested %d levels deep.", depth),
			InputSchema: emptyObjectSchema(),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "deep"}},
				StructuredContent: DeepValue(depth),
			}, nil
		})
	}
	if d.cfg.HugeDescriptions {
		for i, name := range HugeDescriptionTools() {
			desc := fmt.Sprintf("Huge description %d. ", i+1)
			desc += strings.Repeat("lorem ipsum ", (HugeDescriptionBytes-len(desc))/12)
			desc += strings.Repeat(".", HugeDescriptionBytes-len(desc))
			d.addOKTool(name, desc)
		}
	}
}
