//go:build !unix

package command

import "os/exec"

// isolate relies on the default cancellation (kill the program only) where
// process groups are not available.
func isolate(*exec.Cmd) {}
