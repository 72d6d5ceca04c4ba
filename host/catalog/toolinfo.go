package catalog

import "github.com/modelcontextprotocol/go-sdk/mcp"

// RawTool is a tool as one server listed it, before naming.
type RawTool struct {
	Server string
	Tool   *mcp.Tool
}

// ToolInfo is one tool with both of its identities: the raw route that goes
// back on the wire (Server, Tool.Name) and the model identity the model
// sees (Namespace, Name, ModelName).
type ToolInfo struct {
	// Server is the raw server name from config: the route.
	Server string
	// Tool is the tool as listed, with untrusted connector _meta keys
	// dropped. Tool.Name is the raw tool name sent in tools/call.
	Tool *mcp.Tool

	// Namespace is the model namespace, e.g. "mcp__files".
	Namespace string
	// Name is the model function name inside Namespace.
	Name string
	// ModelName is the flat model-visible name: Namespace + "__" + Name,
	// or just Name for a server with prefixing turned off.
	ModelName string

	// ModelVisible is false when _meta.ui.visibility excludes "model":
	// the tool stays registered (dispatchable for apps) but the model may
	// neither see nor run it.
	ModelVisible bool
}

// RawName is the raw tool name, the one the server knows.
func (t ToolInfo) RawName() string { return t.Tool.Name }
