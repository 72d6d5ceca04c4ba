package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newValidateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Check the configuration and print diagnostics; starts nothing",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			enabled := len(enabled(cfg))
			fmt.Fprintf(g.io.Out, "%s: valid (%d server(s), %d enabled; %d plugin(s); %d environment(s))\n",
				joinPaths(cfg.Paths), len(cfg.Servers), enabled, len(cfg.Plugins), len(cfg.Environments))
			return nil
		},
	}
}

func joinPaths(ps []string) string {
	if len(ps) == 1 {
		return ps[0]
	}
	return fmt.Sprintf("%d files", len(ps))
}
