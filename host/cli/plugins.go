package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/pluginhost"
)

func newPluginsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Start every configured plugin and show its kind, version, protocol, checksum and health",
		Long: `Start every plugin block of the configuration (hooks, the Guardian, launchers),
ask each for its Info, configure it with its config {} block, print one row per
plugin, and stop them again. Starting a plugin also verifies its sha256 pin.

A launcher plugin is configured here with its own block's config {}; an
environment that uses it may configure it differently when servers start.

Columns: PROTOCOL is the negotiated go-plugin version and the API version of
the plugin's service; CHECKSUM is "not pinned", "pinned, verified" or
"pinned, MISMATCH"; HEALTH is "running pid N" for a plugin that started, or
why it did not (details follow the table).

Exit codes: 0 every plugin started; 1 a plugin failed to start;
2 the configuration is invalid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			plugins := pluginhost.New(cfg, pluginhost.Options{Logger: g.logger(), LookupEnv: g.io.LookupEnv})
			plugins.Probe(cmd.Context())
			status := plugins.Status()
			_ = plugins.Close()

			if asJSON {
				if err := printJSON(g, struct {
					Plugins []pluginhost.Status `json:"plugins"`
				}{status}); err != nil {
					return exit(ExitFailure, err)
				}
			} else {
				printPlugins(g, cfg, status)
			}
			failed := 0
			for _, s := range status {
				if s.Health != pluginhost.HealthRunning {
					failed++
				}
			}
			if failed > 0 {
				return exit(ExitFailure, fmt.Errorf("%d of %d plugin(s) did not start", failed, len(status)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func printPlugins(g *globals, cfg *config.Config, status []pluginhost.Status) {
	if len(status) == 0 {
		fmt.Fprintln(g.io.Out, `no plugins configured: add a plugin block (see "Writing a plugin" in sdk/README.md)`)
		return
	}
	tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tKIND\tVERSION\tPROTOCOL\tCHECKSUM\tHEALTH")
	for _, s := range status {
		version := "-"
		if s.PluginName != "" {
			version = s.PluginName
			if s.Version != "" {
				version += " " + s.Version
			}
		}
		health := s.HealthText()
		if s.Err != nil {
			health = s.Health + " (see below)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, version, s.ProtocolText(), s.Checksum, health)
	}
	_ = tw.Flush()

	for _, s := range status {
		if s.Err == nil {
			continue
		}
		fmt.Fprintln(g.io.Err)
		var ce *pluginhost.ConfigError
		if errors.As(s.Err, &ce) {
			fmt.Fprintf(g.io.Err, "plugin %q: its configuration was refused:\n", s.Name)
			_ = config.WriteDiagnostics(g.io.Err, ce.Diags, cfg.Files, g.width(), g.color())
			continue
		}
		fmt.Fprintf(g.io.Err, "Error: %v\n", s.Err)
	}
}
