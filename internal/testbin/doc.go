// Package testbin gives tests the project's real binaries (mcp-demo,
// plugins, the toolgate CLI) so integration tests run what users run.
//
// `make test` builds everything into bin/ and sets TOOLGATE_BIN; a plain
// `go test` without it builds the needed package once per test process
// into a temporary directory. Either way nothing is skipped. Which package
// builds which binary comes from binaries.list at the repository root, the
// one list `make build` and the container image also read.
//
// It also says what a test does on a machine without a delegated cgroup
// ([SkipWithoutCgroup]): skip, or fail where TOOLGATE_REQUIRE_CGROUP=1.
//
// It must only be imported from tests.
package testbin
