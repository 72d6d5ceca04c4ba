//go:build !linux

package gateway_test

// residentBytes is not measured off Linux: the load benchmark then
// checks goroutines only.
func residentBytes() (int64, bool) { return 0, false }
