//go:build !linux

package launcher

import (
	"os/exec"
)

func exitErrorOf(xe *exec.ExitError) *ExitError {
	return &ExitError{Code: xe.ExitCode(), Message: xe.String()}
}
