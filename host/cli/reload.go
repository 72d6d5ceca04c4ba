package cli

import (
	"fmt"

	"github.com/toolgate/toolgate/host"
)

// reloader returns the function a long-running command calls on SIGHUP or
// a config file change: it loads path again and applies it. An invalid
// configuration is printed with its diagnostics and refused; the running
// one keeps serving.
func (g *globals) reloader(h *host.Host, path string) func() {
	return func() {
		cfg, diags := g.load(path)
		if diags.HasErrors() {
			fmt.Fprintf(g.io.Err, "toolgate: the new configuration in %s has %d error(s); still running the previous one\n", path, len(diags.Errs()))
			return
		}
		res := h.Apply(cfg)
		fmt.Fprintf(g.io.Err, "toolgate: configuration reloaded: %d kept, %d updated, %d restarted, %d removed, %d added\n",
			len(res.Kept), len(res.Updated), len(res.Restarted), len(res.Removed), len(res.Added))
	}
}
