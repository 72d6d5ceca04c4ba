package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/replay"
)

// ExitLoosened is `toolgate replay`'s status when a candidate lets
// through a call the ledger shows was stopped (deny→allow, deny→ask,
// ask→allow), so CI can gate a policy change.
const ExitLoosened = 2

func newReplayCmd(g *globals) *cobra.Command {
	var asJSON, llm bool
	cmd := &cobra.Command{
		Use:   "replay --config CANDIDATE LEDGER...",
		Short: "Re-decide recorded calls with a candidate configuration's approval chain; nothing runs",
		Long: `replay reads the tool calls recorded in audit ledger files and puts each through
the approval chain of the configuration given with --config: approval modes,
remembered approvals in that config, permission and PreToolUse hook plugins,
and the Guardian's rules engine (an LLM Guardian only with --llm-reviewer).
Nothing is executed, no MCP server is contacted, and no human is asked: a call
that would reach the human is reported as "ask".

It prints the calls whose decision changes, grouped by the step, hook or rule
that causes the change, with each call's ledger seq and call id.

Exit status: 0 when nothing loosens, 2 when a call the ledger shows denied (or
put to a human) would now be allowed or put to a human (deny→allow, deny→ask,
ask→allow), 1 on errors.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			r := replay.New(cfg, replay.Options{Logger: g.logger(), LookupEnv: g.io.LookupEnv,
				Cwd: filepath.Dir(g.loadedPath), LLMReviewer: llm})
			res, err := r.Run(cmd.Context(), args)
			if cerr := r.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return exit(ExitFailure, err)
			}
			if asJSON {
				if err := printJSON(g, res); err != nil {
					return err
				}
			} else {
				printReplay(g, res)
			}
			if res.Loosened > 0 {
				if !asJSON {
					fmt.Fprintf(g.io.Err, "%d call(s) would be let through that were not: exit status %d\n", res.Loosened, ExitLoosened)
				}
				return exit(ExitLoosened, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&llm, "llm-reviewer", false, "let a Guardian with an LLM engine review calls (it contacts the model)")
	return cmd
}

func printReplay(g *globals, res *replay.Result) {
	fmt.Fprintln(g.io.Out, res.Summary())
	if len(res.Changed) == 0 {
		return
	}
	for _, gr := range res.Groups() {
		mark := ""
		if replay.Loosens(gr.Before, gr.After) {
			mark = " (loosens)"
		}
		fmt.Fprintf(g.io.Out, "\n%s → %s%s, %d call(s): %s\n", gr.Before, gr.After, mark, len(gr.Calls), gr.Cause)
		tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
		for _, c := range gr.Calls {
			fmt.Fprintf(tw, "  seq %d\t%s\t%s/%s\tcaller %s\twas: %s\n", c.Seq, c.CallID, c.Server, c.Tool, c.Caller,
				strings.TrimSpace(c.Before.Cause()))
		}
		tw.Flush()
	}
}
