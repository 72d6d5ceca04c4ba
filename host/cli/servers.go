package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/internal/safetext"
)

func newServersCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "Start every configured server and show its status, tool count, protocol and error",
		Long: `Start every enabled server of the configuration concurrently, wait until each is
ready, failed or cancelled, print one row per server, and then stop them.

On a terminal, each server's outcome is shown as it arrives.

Exit codes: 0 every enabled server is ready; 1 a required server failed;
3 only optional servers failed; 2 the configuration is invalid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			h, sum, err := g.startHost(cmd.Context(), cfg, !asJSON && g.isTerminal(g.io.Err), host.Options{})
			if err != nil {
				return err
			}
			// Print as soon as every server settled: stopping them can take
			// seconds (a server that ignores SIGTERM gets its grace), and the
			// answer is known already.
			defer h.Close()
			status := h.Manager.Status()
			reqErr := h.Manager.RequiredError()

			if asJSON {
				out := struct {
					Servers []manager.ServerStatus `json:"servers"`
					Startup events.StartupComplete `json:"startup"`
				}{status, sum}
				if err := printJSON(g, out); err != nil {
					return exit(ExitFailure, err)
				}
			} else {
				printServers(g, status)
			}
			switch {
			case reqErr != nil:
				return exit(ExitFailure, reqErr)
			case len(sum.Failed) > 0 || len(sum.Cancelled) > 0:
				return exit(ExitDegraded, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func printServers(g *globals, status []manager.ServerStatus) {
	if len(status) == 0 {
		fmt.Fprintln(g.io.Out, "no servers configured: add a server block (see config.hcl.example)")
		return
	}
	tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATUS\tTRANSPORT\tTOOLS\tPROTOCOL\tWHERE\tAUTH\tRESTARTS\tERROR")
	for _, s := range status {
		where := s.Environment
		if s.Launcher != "" && s.Launcher != s.Environment {
			where += " (" + s.Launcher + ")"
		}
		if where == "" {
			where = "-"
		}
		if s.Containment != "" {
			where += ", " + s.Containment
		}
		proto := s.Protocol
		if proto == "" {
			proto = "-"
		}
		authState := s.Auth
		if authState == "" {
			authState = "-"
		}
		status, problem := s.Status, s.Error
		if s.Degraded != "" {
			status, problem = s.Status+" (degraded)", s.Degraded
		}
		restarts := fmt.Sprint(s.Restarts)
		if s.CrashLoop > 1 {
			restarts += fmt.Sprintf(" (crash loop: %d in a row)", s.CrashLoop)
		}
		if s.StartupRetries > 0 {
			restarts += fmt.Sprintf(" (startup retries: %d)", s.StartupRetries)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Name, status, s.Transport, s.Tools, proto, where, authState, restarts, oneLine(problem))
	}
	_ = tw.Flush()
}

// oneLine shows server-supplied text in one table cell: whitespace runs
// become one space, and escapes and bidi controls become visible rather
// than acting on the terminal.
func oneLine(s string) string {
	return safetext.Line(strings.Join(strings.Fields(s), " "))
}
