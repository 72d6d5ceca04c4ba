// Package exposure owns the question "what may the model propose in this
// step?" and routes what it proposes.
//
// A [Step] captures the catalog once, on first use, and every consumer in
// that step — the model-visible tool specs, the call handler (and, with
// deferred exposure, the search index) — reads that same list. From it the
// step builds two views that must never be confused:
//
//   - the model-visible specs: tools the model is shown (direct) now;
//   - the registry: every runtime the step can dispatch, including tools
//     the model cannot see (hidden by _meta.ui.visibility).
//
// [Step.Call] is the call path: model name → raw route, argument parsing,
// the tool_call_begin event, approval (package approval decides), the
// catalog-revision guard, then execution (package execution runs the call
// and shapes the answer). Calls to parallel-safe tools (server opt-in or
// readOnlyHint) run concurrently; all other calls of a step are serialized.
//
// When a server offers resources it adds the host tools
// list_mcp_resources, list_mcp_resource_templates and read_mcp_resource
// (resources.go); reads are audited but not put through approval.
//
// It must not decide approval, talk to servers, or shape results: it asks
// the [Approver] and the [Executor] it is given.
//
// A Step is safe for concurrent use.
//
// The host package's Example shows a Step in use: the tools shown to the
// model and a call through approval to the server.
package exposure
