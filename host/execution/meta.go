package execution

import (
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// Keys of the call ids in a tools/call's _meta.
const (
	MetaCallID   = "callId"
	MetaThreadID = "threadId"
)

// Meta builds the _meta of one tools/call, nil when there is nothing to
// add: sandbox state under each sandbox capability key the server
// declared in caps (nil caps: none), and the call id and the session id
// (as threadId) when ids is set (the server's call_meta) or the server
// declared a sandbox capability (a server written for Codex, which sends
// them always). An empty cwd is left out of the sandbox state rather
// than sent as "" or "file://".
//
// Nothing is added by default because every key costs the server a
// decode on every call (issue 30: about 20 allocations and 10 KB in a
// go-sdk server) and the ids mean nothing to most servers.
func Meta(call events.Call, caps *mcp.ServerCapabilities, perms, cwd string, ids bool) mcp.Meta {
	var ours, codex bool
	if caps != nil {
		_, ours = caps.Experimental[SandboxStateCapability]
		_, codex = caps.Experimental[CodexSandboxStateCapability]
	}
	if !ids && !ours && !codex {
		return nil
	}
	meta := mcp.Meta{
		MetaCallID:   call.CallID,
		MetaThreadID: call.SessionID,
	}
	if ours {
		state := map[string]any{"permissions": perms}
		if cwd != "" {
			state["cwd"] = cwd
		}
		meta[SandboxStateCapability] = state
	}
	if codex {
		state := map[string]any{"permissionProfile": perms}
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
