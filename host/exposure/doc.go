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
// [Step.Call] routes: model name → raw route and argument parsing, then
// it hands the request to the pipeline (host/pipeline: admit, audit,
// hooks, approval, execution) once, with the step's freshness guard: the
// catalog-revision check, taken with the call's turn — calls to
// parallel-safe tools (server opt-in or readOnlyHint) run concurrently,
// all other calls of a step are serialized.
//
// When a server offers resources it adds the host tools
// list_mcp_resources, list_mcp_resource_templates and read_mcp_resource
// (resources.go); a read goes through the pipeline as a resource read
// (admitted and audited, not put through approval).
//
// It must not decide approval, talk to servers, emit request events or
// shape results: the pipeline does all of it.
//
// A Step is safe for concurrent use.
//
// The host package's Example shows a Step in use: the tools shown to the
// model and a call through approval to the server.
package exposure
