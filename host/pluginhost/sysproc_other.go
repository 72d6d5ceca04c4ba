//go:build !linux

package pluginhost

import "os/exec"

// setPdeathsig does nothing outside Linux, which has no parent-death
// signal: plugins are stopped by Close (and go-plugin's own cleanup).
func setPdeathsig(*exec.Cmd) {}
