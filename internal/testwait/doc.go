// Package testwait bounds the waits of tests. A test that waits for a
// channel fails, after a bound, with a message naming what it waited for,
// instead of hanging until go test's -timeout ends the whole binary with a
// goroutine dump that does not say which wait hung.
//
// It replaces `case <-t.Context().Done():` in a select: that context is
// cancelled only after the test function returns, so such a branch can
// never fire while the test is waiting.
//
// It owns the bound ([Bound], overridable with TOOLGATE_TEST_WAIT for
// slow machines) and the failure text. It must not sleep or poll: every
// wait is a select on the awaited channel and one timer. It is imported
// only by tests.
package testwait
