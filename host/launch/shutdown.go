package launch

import "time"

// shutdownAction is one step of ending a server.
type shutdownAction int

const (
	closeStdin   shutdownAction = iota // EOF on stdin: the MCP way to ask a stdio server to exit
	termGroup                          // SIGTERM to the process group (Unix)
	killGroup                          // SIGKILL to the process group (Unix)
	terminateJob                       // TerminateJobObject: every process in the server's job (Windows)
)

func (a shutdownAction) String() string {
	switch a {
	case closeStdin:
		return "close stdin"
	case termGroup:
		return "SIGTERM to the process group"
	case killGroup:
		return "SIGKILL to the process group"
	case terminateJob:
		return "terminate the job object"
	}
	return "unknown"
}

// shutdownStep is an action and how long to wait for the server to exit
// before the next step; the last step has no wait (it cannot be refused).
type shutdownStep struct {
	action shutdownAction
	grace  time.Duration
}

// shutdownPlan is the order in which [Process.Close] ends a server on goos.
// Unix: close stdin, SIGTERM the group, SIGKILL the group. Windows has no
// signals a console-less child could handle, so after stdin EOF and its
// grace the job is terminated (the Windows equivalent of SIGKILL, for the
// server and everything it started).
func shutdownPlan(goos string, stdinGrace, termGrace time.Duration) []shutdownStep {
	if goos == "windows" {
		return []shutdownStep{{closeStdin, stdinGrace}, {terminateJob, 0}}
	}
	return []shutdownStep{{closeStdin, stdinGrace}, {termGroup, termGrace}, {killGroup, 0}}
}
