package gateway

// callStackBytes is what growStack reserves on the goroutine that runs a
// call through the pipeline: go-sdk's request goroutine for a client
// older than 2026-07-28 (runHere), the call's own otherwise (run). Both
// start small, and the pipeline (approval, execution, the stdio client
// and go-sdk's encoder beneath it) is deep enough to grow them two or
// three times on every call, each time copying every frame on the
// stack, deepest last (issue 30: the largest cost toolgate added over
// the go-sdk floor's request path in the CPU profile). Reserved near the
// top, it takes the stack to the 32 KiB the call grew it to anyway (the
// runtime doubles to fit), in one copy; more would take it to 64 KiB
// for nothing, less (16 KiB) leaves go-sdk's encoder growing it again
// deep in the call (seen in the profile with 12 KiB reserved).
const callStackBytes = 24 << 10

// growStack makes the runtime grow the calling goroutine's stack to
// hold callStackBytes more while the stack is still shallow: one copy of
// a few frames instead of several copies of the deep ones. The frame of
// this function is the reservation (zeroed: a few hundred nanoseconds);
// it returns at once.
//
//go:noinline
func growStack(i uint8) uint8 {
	var reserve [callStackBytes]uint8
	reserve[i] = i
	return reserve[len(reserve)-1-int(i)]
}
