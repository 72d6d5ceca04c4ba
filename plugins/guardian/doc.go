// Command toolgate-guardian is toolgate's automatic reviewer: it decides,
// instead of a human, whether a tool call that needs approval may run, with
// a deterministic rules engine or any OpenAI-compatible model. See README.md
// and package github.com/toolgate/toolgate/plugins/guardian/internal/reviewer;
// this package only serves it.
package main
