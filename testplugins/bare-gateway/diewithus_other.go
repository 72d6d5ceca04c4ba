//go:build !linux

package main

import "os/exec"

// dieWithUs does nothing outside Linux: this baseline gateway is test
// support, and only Linux has a parent-death signal. A server it started
// notices the gateway's death when its stdin reaches EOF.
func dieWithUs(cmd *exec.Cmd) {}
