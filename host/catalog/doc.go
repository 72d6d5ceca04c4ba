// Package catalog turns the tools that servers list into the tools a model
// sees: it owns the model names of tools (sanitizing, prefixing, collision
// hashing, the length limit), their model visibility (_meta.ui.visibility),
// the stripping of untrusted connector _meta keys, and the per-server tool
// filters (enabled_tools / disabled_tools).
//
// Every ToolInfo carries two identities. The raw route (Server, Tool.Name)
// is what goes back on the wire in tools/call and what filters match; the
// model identity (Namespace, Name, ModelName) is what the model proposes.
// Keeping both is what lets two servers list a tool called "search", or a
// server name contain characters a model API rejects, without ambiguity.
//
// Naming is a pure function of the whole set of tools: adding a server can
// rename the colliding tools of another, so callers must name the complete
// catalog at once (Normalize) and never one server in isolation. The result
// does not depend on the order of the input.
//
// What the package must not do: talk to servers (discovery belongs to
// host/manager and host/mcpclient), or decide whether a tool is offered to
// the model directly, deferred or hidden (exposure belongs to
// host/exposure; ModelVisible only reports what the server declared).
//
// Concurrency: there is no shared state. Normalize and Filter.Allows are
// safe to call from any goroutine. The returned ToolInfo values point to
// copies of the listed tools that callers must treat as read-only.
package catalog
