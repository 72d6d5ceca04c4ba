package host

import "github.com/toolgate/toolgate/internal/contain"

// RunSupervisorIfAsked must be the first call in the main of a program
// that embeds a Host, as it is in toolgate's own main. A Host ends what
// its servers and plugins start, even if the program is SIGKILLed,
// through a supervisor (Linux and macOS): the program's own binary,
// re-executed; this call is where that re-executed process does the job
// and exits. In every other process it returns at once. Without it the
// servers are still contained while the program runs, but what they
// started outside their process group (setsid) outlives a SIGKILLed
// program. Nothing runs before main: a program that never calls it has
// no supervisor. Test binaries that run a Host call it in TestMain.
func RunSupervisorIfAsked() { contain.RunSupervisorIfAsked() }
