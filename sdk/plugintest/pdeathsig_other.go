//go:build !linux

package plugintest

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
