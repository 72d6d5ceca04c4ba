package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host"
)

func newSearchCmd(g *globals) *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the deferred tools the way the model's tool_search does",
		Long: `Search the deferred tools (those behind tool_search; see the exposure block
and toolgate tools) with the same index and ranking the model gets, and show
what it would find.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit <= 0 {
				return exit(ExitUsage, fmt.Errorf("limit must be greater than zero"))
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			h, _, err := g.startHost(cmd.Context(), cfg, !asJSON && g.isTerminal(g.io.Err), host.Options{})
			if err != nil {
				return err
			}
			defer h.Close()
			step := h.NewStep("")
			if len(step.Deferred()) == 0 {
				fmt.Fprintln(g.io.Err, "note: no tool is deferred under this configuration (exposure mode and thresholds); nothing to search")
			}
			found, err := step.Search(cmd.Context(), args[0], limit)
			if err != nil {
				return exit(ExitUsage, err)
			}
			if asJSON {
				type hit struct {
					Rank        int    `json:"rank"`
					ModelName   string `json:"model_name"`
					Server      string `json:"server"`
					Tool        string `json:"tool"`
					Description string `json:"description,omitempty"`
				}
				out := []hit{}
				for i, t := range found {
					out = append(out, hit{i + 1, t.ModelName, t.Server, t.RawName(), t.Tool.Description})
				}
				return printJSON(g, out)
			}
			if len(found) == 0 {
				fmt.Fprintln(g.io.Out, "no deferred tool matches")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RANK\tMODEL NAME\tDESCRIPTION")
			for i, t := range found {
				fmt.Fprintf(tw, "%d\t%s\t%s\n", i+1, t.ModelName, oneLine(firstN(t.Tool.Description, 80)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 8, "how many tools to show")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func firstN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
