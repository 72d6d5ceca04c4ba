// Package reviewer is the toolgate-guardian plugin: the automatic reviewer
// that decides, instead of a human, whether a tool call that needs approval
// may run. It reads its config block, runs the chosen engine (package rules
// or package llm), fails closed, and trips a per-session circuit breaker.
//
// # Failing closed
//
// Every assessment carries a risk level and a rationale. An engine error
// becomes a denial, never an allow:
//
//   - a deadline (the llm engine's 90 s budget, or the host's own deadline)
//     is returned as an error wrapping context.DeadlineExceeded; the host maps
//     it to the Codex timeout text ("The automatic permission approval review
//     did not finish before its deadline. …"). A cancellation is returned as
//     context.Canceled.
//   - any other error (a malformed model answer, an endpoint failure after
//     the retries) is a deny verdict with risk high and the rationale
//     "Automatic approval review failed: <what went wrong>".
//
// The host shows a denial to the model as "This action was rejected due to
// unacceptable risk.\nReason: <rationale>"; the rationale therefore never
// repeats that sentence.
//
// # Circuit breaker
//
// Per session, after 3 consecutive denials, or 10 denials among the session's
// last 50 reviews (the Codex Guardian's constants, per session here because
// toolgate has no turns), the Guardian stops reviewing that session: every
// further call is denied at once, with a rationale saying the circuit is open
// and that a human must approve. An allow resets the consecutive count. The
// circuit stays open until the plugin is restarted; a new session starts
// closed. Timeouts and cancellations are not verdicts and do not count.
// At most 4096 sessions are tracked; the least recently reviewed is
// forgotten first.
//
// What it must not do: import the host or the MCP SDK, log arguments,
// prompts or the API key.
//
// Concurrency: a *Reviewer is safe for concurrent use. Configure swaps the
// engine atomically; the breaker's state is kept across reconfiguration.
package reviewer
