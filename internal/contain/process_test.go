//go:build unix || windows

package contain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStopPlanPerOS(t *testing.T) {
	const stdin, term = 2 * time.Second, 3 * time.Second
	for goos, want := range map[string][]plannedStep{
		"linux":   {{StepCloseStdin, stdin}, {StepTerm, term}, {StepKill, 0}},
		"darwin":  {{StepCloseStdin, stdin}, {StepTerm, term}, {StepKill, 0}},
		"windows": {{StepCloseStdin, stdin}, {StepKill, 0}},
	} {
		got := stopPlan(goos, stdin, term)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(plannedStep{})); diff != "" {
			t.Errorf("%s stop plan (-want +got):\n%s", goos, diff)
		}
	}
}
