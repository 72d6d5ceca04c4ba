// Package llm is the Guardian's model-backed engine: it asks any
// OpenAI-compatible chat-completions endpoint (OpenAI, a local Ollama or
// vLLM, …) to assess a tool call, and turns the model's JSON answer into a
// verdict.
//
// The request is deterministic and strict: temperature 0, response_format
// {"type": "json_object"}, and a system prompt that states the risk scale
// and the exact output schema {"outcome", "risk_level",
// "user_authorization", "rationale"} (only outcome is required, as in Codex).
// The action is sent in the Codex Guardian's shape (tool "mcp_tool_call",
// server, tool_name, arguments, tool_title, tool_description, annotations)
// plus the session's recent calls, with large arguments truncated. Tool
// descriptions, arguments and history are marked as untrusted data.
//
// Budget and retries: one review has a total budget (90 s by default,
// GUARDIAN_REVIEW_TIMEOUT in Codex) and at most 3 attempts (Codex's
// GUARDIAN_REVIEW_MAX_ATTEMPTS). Only retryable failures are retried: HTTP
// 408, 429 and 5xx, and network errors, with capped exponential backoff and
// jitter (internal/backoff; Retry-After is honoured) inside the budget.
//
// Errors. Review returns an error, never a made-up verdict, and callers
// (package reviewer) fail closed:
//
//   - the budget ran out: an error wrapping context.DeadlineExceeded (the
//     host maps it to the Codex timeout text); the caller's own deadline or
//     cancellation: the context's error;
//   - a malformed answer (not JSON, no valid outcome): an error wrapping
//     [ErrMalformed];
//   - anything else (a non-retryable status, retries exhausted): an error
//     naming the status or cause. The API key never appears in errors: it is
//     redacted from every text taken from the endpoint.
//
// What it must not do: log prompts, arguments or the API key; follow
// redirects to another host with the key (the key is only sent to the
// configured endpoint).
//
// Concurrency: an *Engine is immutable and safe for concurrent use; each
// review makes its own requests.
package llm
