package testbin

import (
	"fmt"
	"os"
	"testing"
)

// EnvRequireCgroup names the variable that makes the tests needing a
// delegated cgroup v2 fail instead of skipping where there is none. The
// CI job that provides one sets it to 1, so a regression in finding or
// using the cgroup cannot hide behind a skip.
const EnvRequireCgroup = "TOOLGATE_REQUIRE_CGROUP"

// SkipWithoutCgroup skips t, which needs containment by cgroup where this
// machine gives toolgate none (format and args say why), or fails it when
// TOOLGATE_REQUIRE_CGROUP=1.
func SkipWithoutCgroup(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if os.Getenv(EnvRequireCgroup) == "1" {
		t.Fatalf("%s=1 but no cgroup containment here: %s. Run toolgate's tests in a delegated cgroup (systemd-run --user --scope, or a container with its own cgroup namespace)", EnvRequireCgroup, why)
	}
	t.Skip(why)
}
