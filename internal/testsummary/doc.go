// Command testsummary reads `go test -json` on stdin and writes what a
// plain `go test` would have written — each package's ok/FAIL line, the
// output of failed tests (data race reports included), build errors,
// panics — followed by the list of skipped tests and why each skipped.
// `make test` pipes its run through it, so a test that silently skips
// (the cgroup tests on a runner without a delegated cgroup, the npm
// referees without TOOLGATE_INTEROP) is visible at the end of every run.
//
// It owns that rendering only. It must not decide whether the run passed:
// the exit status is go test's (make runs with pipefail); testsummary
// exits non-zero only when it cannot read its input.
package main
