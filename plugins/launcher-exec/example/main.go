// Command toolgate-launcher-nice is a complete launcher plugin: it runs
// every stdio server of an environment on this machine at a lower CPU
// priority. It is the example of sdk/README.md, "Write your own
// launcher"; a test builds it and runs an MCP session through it.
package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
)

type nice struct{ level atomic.Int64 }

// ConfigSchema declares the environment's config { niceness = 10 }. The
// host decodes the block with it and reports mistakes at the user's line.
func (*nice) ConfigSchema() sdk.ConfigSchema {
	return sdk.ConfigSchema{Attributes: []sdk.Attribute{{
		Name: "niceness", Type: sdk.TypeNumber, Default: json.RawMessage("10"),
		Description: "how much to lower the servers' CPU priority, 0 to 19",
	}}}
}

// Configure gets the decoded block as JSON before the first Start.
func (n *nice) Configure(_ context.Context, raw json.RawMessage) []sdk.Diagnostic {
	cfg := struct{ Niceness int }{Niceness: 10}
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.Niceness < 0 || cfg.Niceness > 19 {
		return []sdk.Diagnostic{{Summary: "Invalid niceness", AttributePath: []string{"niceness"},
			Detail: "niceness must be a whole number from 0 to 19."}}
	}
	n.level.Store(int64(cfg.Niceness))
	return nil
}

// Start runs one server. spec.Env holds only the server's explicit
// entries (env_vars, env), so give it a base first; later entries win.
// StartCommand adds the process group, SIGKILL if the plugin dies, and
// pipes (never a TTY); the SDK streams the rest.
func (n *nice) Start(_ context.Context, spec launcher.Spec) (launcher.Process, error) {
	args := append([]string{"-n", strconv.FormatInt(n.level.Load(), 10), spec.Command}, spec.Args...)
	cmd := exec.Command("nice", args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, spec.Environ()...)
	cmd.Dir = spec.Dir
	return launcher.StartCommand(cmd)
}

func main() { launcher.Serve(&nice{}) }
