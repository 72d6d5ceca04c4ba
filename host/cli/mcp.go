package cli

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/clients"
	"github.com/toolgate/toolgate/host/config"
)

func newMCPCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Add, remove, show and list the configuration's MCP servers (edits the HCL, comments kept)",
		Long: `Edit the server blocks of the configuration from the command line, with the
flags Codex and Claude Code users know. Edits keep the rest of the file byte for
byte, are validated before anything is written (an edit that would make the
configuration invalid is refused), and are refused with a clear error on a
read-only configuration.`,
	}
	cmd.AddCommand(newMCPAddCmd(g), newMCPRemoveCmd(g), newMCPGetCmd(g), newMCPListCmd(g))
	return cmd
}

func newMCPAddCmd(g *globals) *cobra.Command {
	var env, envVars, headers, enabledTools, disabledTools []string
	var url, bearer, cwd, transport string
	var startupTimeout, toolTimeout float64
	var disabled bool
	cmd := &cobra.Command{
		Use:   "add <name> [--env K=V ...] (--url URL | -- command [args...])",
		Short: "Add a server block: a stdio command after --, or --url for Streamable HTTP",
		Example: `  toolgate mcp add github --env GITHUB_TOKEN=ghp_xxx -- npx -y @modelcontextprotocol/server-github
  toolgate mcp add docs --url https://mcp.example.com/mcp --bearer-token-env-var DOCS_TOKEN`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, command := args[0], args[1:]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash != 1 {
				return exit(ExitUsage, fmt.Errorf("write the server's name before --: toolgate mcp add NAME -- COMMAND ARGS"))
			}
			if !serverNamePattern.MatchString(name) {
				return exit(ExitUsage, fmt.Errorf("invalid server name %q: use only letters, digits, _ and -", name))
			}
			s := clients.Server{Name: name, URL: url, BearerTokenEnvVar: bearer, Cwd: cwd, EnvVars: envVars,
				Disabled: disabled, StartupTimeoutSec: startupTimeout, ToolTimeoutSec: toolTimeout}
			switch transport {
			case "", "stdio", "http", "streamable-http", "streamable_http":
			case "sse":
				s.SSE = true
			default:
				return exit(ExitUsage, fmt.Errorf("--transport %q: use stdio or http", transport))
			}
			if cmd.Flags().Changed("enabled-tools") {
				s.EnabledTools = enabledTools
			}
			if cmd.Flags().Changed("disabled-tools") {
				s.DisabledTools = disabledTools
			}
			if len(command) > 0 {
				s.Command, s.Args = command[0], command[1:]
			}
			switch {
			case s.Command == "" && s.URL == "":
				return exit(ExitUsage, fmt.Errorf("server %q needs a command (after --) or --url", name))
			case s.Command != "" && s.URL != "":
				return exit(ExitUsage, fmt.Errorf("server %q: give either a command (after --) or --url, not both", name))
			}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return exit(ExitUsage, fmt.Errorf("--env %q: write KEY=VALUE", k))
				}
				s.Env = append(s.Env, clients.KV{K: k, V: v})
			}
			for _, h := range headers {
				k, v, ok := strings.Cut(h, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return exit(ExitUsage, fmt.Errorf("--header: write \"Name: value\""))
				}
				s.Headers = append(s.Headers, clients.KV{K: strings.TrimSpace(k), V: strings.TrimSpace(v)})
			}
			path, cfg, err := g.editConfig()
			if err != nil {
				return err
			}
			if _, ok := cfgServer(cfg, name); ok {
				return exit(ExitUsage, fmt.Errorf("the configuration already has a server %q (%s); remove it first (toolgate mcp remove %s) or choose another name",
					name, declAt(cfg, name), name))
			}
			res, err := clients.ImportServers([]clients.Server{s}, clients.ImportOptions{Existing: serverNames(cfg), LookupEnv: g.io.LookupEnv})
			if err != nil {
				return exit(ExitFailure, err)
			}
			if len(res.Imported) != 1 || res.Imported[0] != name {
				for _, n := range res.Notes {
					if n.Kind == clients.NoteSkipped || n.Kind == clients.NoteChanged {
						return exit(ExitUsage, fmt.Errorf("server %q: %s", name, n.Text))
					}
				}
				return exit(ExitUsage, fmt.Errorf("server %q could not be added", name))
			}
			target := editFile(path, cfg)
			if err := config.AppendServers(path, target, res.HCL, config.EditOptions{LookupEnv: g.io.LookupEnv}); err != nil {
				return exit(ExitFailure, err)
			}
			fmt.Fprintf(g.io.Err, "added server %q to %s\n", name, target)
			for _, n := range res.Notes {
				fmt.Fprintf(g.io.Err, "  %s: %s\n", n.Kind, n.Text)
			}
			if len(res.SetEnv) > 0 {
				fmt.Fprintf(g.io.Err, "set in toolgate's environment: %s\n", strings.Join(res.SetEnv, " "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&env, "env", "e", nil, "KEY=VALUE for the server's environment (repeatable); a secret-looking value is not written: the variable is passed through from toolgate's environment")
	f.StringArrayVar(&envVars, "env-var", nil, "pass this variable through from toolgate's environment (repeatable)")
	f.StringVar(&url, "url", "", "a Streamable HTTP server's URL")
	f.StringVar(&bearer, "bearer-token-env-var", "", "HTTP: the variable holding the bearer token")
	f.StringArrayVarP(&headers, "header", "H", nil, "HTTP: \"Name: value\" (repeatable); a secret-looking value goes to an environment variable")
	f.StringVar(&cwd, "cwd", "", "stdio: the working directory")
	f.StringVarP(&transport, "transport", "t", "", "stdio or http (follows from -- or --url when omitted)")
	f.StringSliceVar(&enabledTools, "enabled-tools", nil, "only these tools (globs, comma-separated)")
	f.StringSliceVar(&disabledTools, "disabled-tools", nil, "never these tools (globs, comma-separated)")
	f.Float64Var(&startupTimeout, "startup-timeout-sec", 0, "startup_timeout_sec (0 = default)")
	f.Float64Var(&toolTimeout, "tool-timeout-sec", 0, "tool_timeout_sec (0 = default)")
	f.BoolVar(&disabled, "disabled", false, "add the server with enabled = false")
	return cmd
}

var serverNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func cfgServer(cfg *config.Config, name string) (config.Server, bool) {
	if cfg == nil {
		return config.Server{}, false
	}
	return cfg.Server(name)
}

func declAt(cfg *config.Config, name string) string {
	s, _ := cfgServer(cfg, name)
	return fmt.Sprintf("%s:%d", s.DeclRange.Filename, s.DeclRange.Start.Line)
}

func newMCPRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove <name>",
		Short: "Remove a server block (and the comment lines directly above it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Server(name); !ok {
				return exit(ExitUsage, fmt.Errorf("no server %q in the configuration; toolgate mcp list shows the servers", name))
			}
			file := cfg.Paths[0]
			if s, ok := cfg.Server(name); ok {
				file = s.DeclRange.Filename
			}
			if err := config.RemoveServer(g.loadedPath, cfg, name, config.EditOptions{LookupEnv: g.io.LookupEnv}); err != nil {
				return exit(ExitFailure, err)
			}
			fmt.Fprintf(g.io.Err, "removed server %q from %s\n", name, file)
			if hooks := config.HooksMatching(cfg, name); len(hooks) > 0 {
				fmt.Fprintf(g.io.Err, "note: the match of hook(s) %s names server %q; with the server gone they no longer apply to it. "+
					"Remove or change those match blocks if they were only for it.\n", strings.Join(hooks, ", "), name)
			}
			return nil
		},
	}
}

func newMCPGetCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get <name>",
		Short: "Print a server's block as written, and where",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			s, ok := cfg.Server(args[0])
			if !ok {
				return exit(ExitUsage, fmt.Errorf("no server %q in the configuration; toolgate mcp list shows the servers", args[0]))
			}
			if asJSON {
				return printJSON(g, listEntry(s))
			}
			src, err := os.ReadFile(s.DeclRange.Filename)
			if err != nil {
				return exit(ExitFailure, err)
			}
			fmt.Fprintf(g.io.Out, "# %s:%d\n", s.DeclRange.Filename, s.DeclRange.Start.Line)
			if f := cfg.Files[s.DeclRange.Filename]; f != nil {
				if r, ok := blockRange(f, args[0]); ok {
					fmt.Fprintln(g.io.Out, string(src[r[0]:r[1]]))
					return nil
				}
			}
			return exit(ExitFailure, fmt.Errorf("server %q: cannot find its block in %s", args[0], s.DeclRange.Filename))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type mcpEntry struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	Enabled   bool     `json:"enabled"`
	File      string   `json:"file"`
	Line      int      `json:"line"`
}

// listEntry is what get and list show of a server; env values and
// headers are left out, as they may hold secrets.
func listEntry(s config.Server) mcpEntry {
	return mcpEntry{Name: s.Name, Transport: string(s.Transport), Command: s.Command, Args: s.Args, URL: s.URL,
		Enabled: s.Enabled, File: s.DeclRange.Filename, Line: s.DeclRange.Start.Line}
}

func newMCPListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured servers (starts nothing; toolgate servers starts them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			entries := make([]mcpEntry, len(cfg.Servers))
			for i, s := range cfg.Servers {
				entries[i] = listEntry(s)
			}
			if asJSON {
				return printJSON(g, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(g.io.Out, "no servers configured: toolgate mcp add NAME -- COMMAND, or toolgate import <client>")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTRANSPORT\tCOMMAND / URL\tENABLED")
			for _, e := range entries {
				what := e.URL
				if e.Command != "" {
					what = strings.TrimSpace(e.Command + " " + strings.Join(e.Args, " "))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", e.Name, e.Transport, what, e.Enabled)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// blockRange is where server name's block is in f.
func blockRange(f *hcl.File, name string) ([2]int, bool) {
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return [2]int{}, false
	}
	for _, b := range body.Blocks {
		if b.Type == "server" && len(b.Labels) == 1 && b.Labels[0] == name {
			r := b.Range()
			return [2]int{r.Start.Byte, r.End.Byte}, true
		}
	}
	return [2]int{}, false
}
