package execution

import (
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

// Capability keys a server declares in capabilities.experimental to
// receive sandbox state in the _meta of every tools/call. Each is also the
// _meta key the state is sent under.
const (
	// SandboxStateCapability is toolgate's own shape:
	// {"permissions": "<profile>", "cwd": "<dir>"}.
	SandboxStateCapability = "toolgate/sandbox-state"
	// CodexSandboxStateCapability is the Codex-compatible shape:
	// {"permissionProfile": "<profile>", "sandboxCwd": "file://<dir>"}.
	CodexSandboxStateCapability = "codex/sandbox-state-meta"
)

// Keys of the _meta every tools/call carries.
const (
	MetaCallID   = "callId"
	MetaThreadID = "threadId"
)

// Meta builds the _meta of one tools/call: the call id and the session id
// (as threadId) always, and sandbox state under each sandbox capability
// key the server declared in caps (nil caps: none). An empty cwd is left
// out of the sandbox state rather than sent as "" or "file://".
func Meta(call events.Call, caps *mcp.ServerCapabilities, perms config.Permissions, cwd string) mcp.Meta {
	meta := mcp.Meta{
		MetaCallID:   call.CallID,
		MetaThreadID: call.SessionID,
	}
	if caps == nil {
		return meta
	}
	if _, ok := caps.Experimental[SandboxStateCapability]; ok {
		state := map[string]any{"permissions": string(perms)}
		if cwd != "" {
			state["cwd"] = cwd
		}
		meta[SandboxStateCapability] = state
	}
	if _, ok := caps.Experimental[CodexSandboxStateCapability]; ok {
		state := map[string]any{"permissionProfile": string(perms)}
		if cwd != "" {
			state["sandboxCwd"] = fileURI(cwd)
		}
		meta[CodexSandboxStateCapability] = state
	}
	return meta
}

// fileURI percent-encodes what a URI path must not hold (spaces, '#',
// '?'), so a server parsing the URI gets the directory back.
func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: dir}).String()
}
