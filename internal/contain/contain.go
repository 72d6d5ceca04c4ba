package contain

import (
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
)

// supervisable says this binary called RunSupervisorIfAsked, so it may be
// re-executed as a supervisor (or probe).
var supervisable atomic.Bool

// sysProcAttr returns cmd's SysProcAttr, creating it: Prepare adds to
// what the owner set (a Windows command line, say) rather than replacing
// it.
func sysProcAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}

// Kind names the containment a [Cell] uses; it is shown by
// `toolgate servers`.
type Kind string

const (
	// KindCgroup: a cgroup v2 of the cell's own (Linux).
	KindCgroup Kind = "cgroup"
	// KindSubreaper: toolgate is a child subreaper and walks descendants
	// (Linux without a usable cgroup2).
	KindSubreaper Kind = "subreaper"
	// KindProcessGroup: the process group, registered with the
	// supervisor (macOS and other Unixes).
	KindProcessGroup Kind = "process-group"
	// KindJobObject: a Job Object with kill-on-close (Windows).
	KindJobObject Kind = "job-object"
)

// ModeEnv forces a containment: "subreaper" disables cgroups (tests use
// it to cover the fallback on machines with cgroup2). Empty or "auto"
// means the strongest available.
const ModeEnv = "TOOLGATE_CONTAINMENT"

// roleEnv marks a re-executed toolgate binary as the supervisor or the
// clone3 probe; see the package documentation.
const roleEnv = "TOOLGATE_CONTAIN_ROLE"

// cellName turns an owner-chosen name (a server's config name) into a
// cgroup directory name: letters, digits, '.', '_' and '-' only, at most
// 48 bytes.
func cellName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		s = "cell"
	}
	return s
}
