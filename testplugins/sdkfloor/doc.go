// Package sdkfloor is a measuring stick, not a gateway: the least a
// gateway built on go-sdk must do to put one stdio MCP server behind
// Streamable HTTP. It is the "go-sdk floor" of docs/performance.md.
//
// It starts the server, lists its tools once, and serves each under its
// own name with a raw go-sdk tool handler that forwards the call with
// ClientSession.CallTool and returns the result untouched. The stdio side
// reads on the caller's goroutine (as host/mcpclient's transport does),
// so the one thing between it and toolgate is what toolgate adds:
// approval, audit, names, limits, progress and sessions.
//
// host/gateway's benchmarks run it beside `toolgate serve`, bare-gateway
// (which uses no go-sdk at all) and the server itself, in the same run.
// BenchmarkInProcessCall runs it in process to compare allocations.
//
// It must not grow features: every line it gains raises the floor that
// toolgate is judged against.
package sdkfloor
