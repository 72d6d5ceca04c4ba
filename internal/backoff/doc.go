// Package backoff computes the waits between retries: capped exponential
// backoff with jitter. Server restarts (host/manager), plugin restarts
// (host/pluginhost), HTTP retries (host/mcpclient) and the LLM Guardian's
// retries all take their waits from [Policy.Delay], so every retry in
// toolgate grows, caps and spreads the same way.
//
// It owns only the arithmetic of the schedule and a context-aware wait; it
// must not decide whether to retry, how often, or what a failure means —
// that stays with each caller.
package backoff
