package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/clients"
	"github.com/toolgate/toolgate/host/config"
)

// clientEnv is what the clients' default paths depend on, read from the
// process.
func (g *globals) clientEnv() clients.Env {
	e := clients.Env{GOOS: runtime.GOOS}
	e.Home, _ = os.UserHomeDir()
	e.Cwd, _ = os.Getwd()
	e.AppData, _ = g.io.LookupEnv("APPDATA")
	e.XDGConfigHome, _ = g.io.LookupEnv("XDG_CONFIG_HOME")
	e.CodexHome, _ = g.io.LookupEnv("CODEX_HOME")
	return e
}

// clientFile reads the client's config: --from, or its default path for
// scope. A missing file reads as empty when allowMissing.
func (g *globals) clientFile(id, from, scope string, allowMissing bool) (*clients.File, []byte, bool, error) {
	c, err := clients.Lookup(id)
	if err != nil {
		return nil, nil, false, exit(ExitUsage, err)
	}
	env := g.clientEnv()
	path := from
	if path == "" {
		if path, err = c.Path(clients.Scope(scope), env); err != nil {
			return nil, nil, false, exit(ExitUsage, err)
		}
	}
	src, err := os.ReadFile(path)
	exists := err == nil
	if errors.Is(err, os.ErrNotExist) && allowMissing {
		err = nil
	}
	if err != nil {
		return nil, nil, false, exit(ExitUsage, fmt.Errorf("read %s's config: %w. Pass the file with --from", c.Name, err))
	}
	f, err := clients.Parse(c, path, src, env)
	if err != nil {
		return nil, nil, false, exit(ExitUsage, err)
	}
	return f, src, exists, nil
}

// editConfig is the config an edit goes to: the discovered one, or, when
// there is none yet, --config's path or ./toolgate.hcl, created.
func (g *globals) editConfig() (path string, cfg *config.Config, err error) {
	path, err = config.Discover(g.configPath, g.io.LookupEnv)
	switch {
	case err == nil:
	case g.configPath != "" && errors.Is(unwrapAll(err), os.ErrNotExist):
		return g.configPath, nil, nil
	case errors.Is(err, config.ErrNoConfig):
		return "toolgate.hcl", nil, nil
	default:
		return "", nil, exit(ExitUsage, err)
	}
	g.loadedPath = path
	cfg, diags := g.load(path)
	if diags.HasErrors() {
		return "", nil, exit(ExitUsage, fmt.Errorf("%s: the configuration has %d error(s); fix them before editing it", path, len(diags.Errs())))
	}
	return path, cfg, nil
}

func unwrapAll(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// editFile is the file of a (possibly directory) config new blocks are
// appended to: the file holding the last server, else the first file.
func editFile(path string, cfg *config.Config) string {
	if cfg == nil {
		return path
	}
	if n := len(cfg.Servers); n > 0 {
		return cfg.Servers[n-1].DeclRange.Filename
	}
	return cfg.Paths[0]
}

func serverNames(cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	out := make([]string, len(cfg.Servers))
	for i, s := range cfg.Servers {
		out[i] = s.Name
	}
	return out
}

func newImportCmd(g *globals) *cobra.Command {
	var from, scope string
	var write bool
	var only []string
	cmd := &cobra.Command{
		Use:   "import <client>",
		Short: "Turn the MCP servers of another client into toolgate server blocks (dry run unless --write)",
		Long: `Read the MCP servers a client already has and print them as toolgate server
blocks: ` + strings.Join(clients.IDs(), ", ") + `.

Each client's file is found where it keeps it on this OS (--scope project reads
the project's file where the client has one: .mcp.json, .cursor/mcp.json,
.vscode/mcp.json, .gemini/settings.json); --from FILE reads any file in that
client's format. A literal that looks like a secret is never copied: it becomes
a reference to an environment variable, and the summary says which to set.
What toolgate cannot express is listed, never dropped silently.

Without --write, the HCL goes to stdout and the summary to stderr. --write
appends the blocks to the configuration (created when there is none yet),
after checking that the result is valid.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, _, _, err := g.clientFile(args[0], from, scope, false)
			if err != nil {
				return err
			}
			path, cfg, err := g.editConfig()
			if err != nil {
				return err
			}
			res, err := clients.Import(f, clients.ImportOptions{Existing: serverNames(cfg), Only: only, Env: g.clientEnv(), LookupEnv: g.io.LookupEnv})
			if err != nil {
				return exit(ExitFailure, err)
			}
			for _, o := range only {
				if !slicesContains(res.Imported, o) && !noteFor(res.Notes, o) {
					return exit(ExitUsage, fmt.Errorf("%s has no server %q", f.Path, o))
				}
			}
			if !write {
				_, _ = g.io.Out.Write(res.HCL)
				printImportSummary(g, f, res, "")
				return nil
			}
			if len(res.Imported) == 0 {
				printImportSummary(g, f, res, "")
				return nil
			}
			target := editFile(path, cfg)
			if err := config.AppendServers(path, target, res.HCL, config.EditOptions{LookupEnv: g.io.LookupEnv}); err != nil {
				return exit(ExitFailure, err)
			}
			printImportSummary(g, f, res, target)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "read this file (in the client's format) instead of the client's own")
	cmd.Flags().StringVar(&scope, "scope", "", "user or project: which of the client's files (default: the client's usual one)")
	cmd.Flags().BoolVar(&write, "write", false, "append the server blocks to the configuration")
	cmd.Flags().StringSliceVar(&only, "only", nil, "import only these servers (comma-separated)")
	return cmd
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func noteFor(notes []clients.Note, server string) bool {
	for _, n := range notes {
		if n.Server == server {
			return true
		}
	}
	return false
}

func printImportSummary(g *globals, f *clients.File, res *clients.Result, wrote string) {
	w := g.io.Err
	switch {
	case wrote != "":
		fmt.Fprintf(w, "imported %d server(s) from %s into %s: %s\n", len(res.Imported), f.Path, wrote, strings.Join(res.Imported, ", "))
	case len(res.Imported) > 0:
		fmt.Fprintf(w, "%d server(s) from %s (dry run; --write appends them): %s\n", len(res.Imported), f.Path, strings.Join(res.Imported, ", "))
	default:
		fmt.Fprintf(w, "nothing to import from %s\n", f.Path)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "  %s: %s: %s\n", n.Server, n.Kind, n.Text)
	}
	if len(res.SetEnv) > 0 {
		fmt.Fprintf(w, "set in toolgate's environment: %s\n", strings.Join(res.SetEnv, " "))
	}
	if wrote != "" {
		fmt.Fprintf(w, "next: toolgate servers (check they start), then toolgate connect %s --move\n", f.Client.ID)
	}
}

// backupPaths are where connect keeps the client's file as it was
// before toolgate first changed it: a copy, or a marker saying it did
// not exist.
func backupPaths(path string) (backup, created string) {
	return path + ".toolgate-backup", path + ".toolgate-created"
}

func newConnectCmd(g *globals) *cobra.Command {
	var from, scope, url, tokenVar string
	var dryRun, undo, move bool
	var startupTimeout int
	cmd := &cobra.Command{
		Use:   "connect <client>",
		Short: "Point a client at toolgate: one MCP server entry running toolgate serve (backup kept; --undo restores)",
		Long: `Rewrite a client's MCP config (` + strings.Join(clients.IDs(), ", ") + `) so that the
client talks to toolgate: an entry named "toolgate" that runs
"toolgate serve --stdio --config <this config>", or, with --url, toolgate's
HTTP endpoint with the bearer token read from the variable --token-env-var.
Everything else in the file is kept as it is, comments included.

Before the first change the file is copied to <file>.toolgate-backup (or, when
it did not exist, <file>.toolgate-created is left as a marker); --undo puts it
back byte for byte. --dry-run prints the change as a diff and writes nothing.

--move also removes from the client's file every server the toolgate
configuration has (import them first: toolgate import <client> --write), so the
client can no longer reach them around the approval chain. The summary names
the servers the client still reaches directly.

For Codex, startup_timeout_sec is set (--startup-timeout) above the time
toolgate's first tools/list may wait for slow servers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if undo {
				return g.undoConnect(args[0], from, scope)
			}
			f, src, exists, err := g.clientFile(args[0], from, scope, true)
			if err != nil {
				return err
			}
			t := clients.Target{URL: url, TokenEnvVar: tokenVar}
			var cfg *config.Config
			if url == "" {
				if t.Command, err = os.Executable(); err != nil {
					return exit(ExitFailure, fmt.Errorf("find the toolgate binary: %w", err))
				}
				if cfg, err = g.loadConfig(); err != nil {
					return err
				}
				abs, err := filepath.Abs(g.loadedPath)
				if err != nil {
					return exit(ExitFailure, err)
				}
				t.Args = []string{"serve", "--stdio", "--config", abs}
			} else if g.configPath != "" || move {
				if cfg, err = g.loadConfig(); err != nil {
					return err
				}
			}
			if f.Client.ID == "codex" {
				t.StartupTimeoutSec = startupTimeout
			}
			var moveNames []string
			if move {
				moveNames = serverNames(cfg)
			}
			res, err := clients.Connect(f, t, moveNames)
			if err != nil {
				return exit(ExitFailure, err)
			}
			if dryRun {
				fmt.Fprint(g.io.Out, unifiedDiff(f.Path, src, res.Out))
				printConnectSummary(g, f, res, t, from, true)
				return nil
			}
			if err := writeClientFile(f.Path, src, exists, res.Out); err != nil {
				return exit(ExitFailure, err)
			}
			printConnectSummary(g, f, res, t, from, false)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "edit this file (in the client's format) instead of the client's own")
	cmd.Flags().StringVar(&scope, "scope", "", "user or project: which of the client's files (default: the client's usual one)")
	cmd.Flags().StringVar(&url, "url", "", "connect over HTTP to this toolgate serve URL (http://HOST:PORT/mcp) instead of stdio")
	cmd.Flags().StringVar(&tokenVar, "token-env-var", "TOOLGATE_TOKEN", "with --url: the variable the client reads serve's bearer token from")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the change as a diff; write nothing")
	cmd.Flags().BoolVar(&undo, "undo", false, "restore the client's file as it was before connect")
	cmd.Flags().BoolVar(&move, "move", false, "remove from the client the servers the toolgate configuration has")
	cmd.Flags().IntVar(&startupTimeout, "startup-timeout", 60, "Codex: startup_timeout_sec of the toolgate entry (0 leaves Codex's default, 10 s)")
	return cmd
}

// writeClientFile replaces the client's file, keeping the first backup.
func writeClientFile(path string, old []byte, exists bool, out []byte) error {
	backup, created := backupPaths(path)
	_, errB := os.Stat(backup)
	_, errC := os.Stat(created)
	if errors.Is(errB, os.ErrNotExist) && errors.Is(errC, os.ErrNotExist) {
		// The first connect: keep the file as it was.
		if exists {
			info, err := os.Stat(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(backup, old, info.Mode().Perm()); err != nil {
				return fmt.Errorf("back up %s: %w; nothing was changed", path, err)
			}
		} else {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
			}
			if err := os.WriteFile(created, nil, 0o600); err != nil {
				return fmt.Errorf("record that %s is new: %w; nothing was changed", path, err)
			}
		}
	}
	mode := os.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	tmp := path + ".toolgate-tmp"
	if err := os.WriteFile(tmp, out, mode); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

func (g *globals) undoConnect(id, from, scope string) error {
	c, err := clients.Lookup(id)
	if err != nil {
		return exit(ExitUsage, err)
	}
	path := from
	if path == "" {
		if path, err = c.Path(clients.Scope(scope), g.clientEnv()); err != nil {
			return exit(ExitUsage, err)
		}
	}
	backup, created := backupPaths(path)
	if _, err := os.Stat(backup); err == nil {
		if err := os.Rename(backup, path); err != nil {
			return exit(ExitFailure, fmt.Errorf("restore %s from %s: %w", path, backup, err))
		}
		fmt.Fprintf(g.io.Err, "restored %s as it was before toolgate connect\n", path)
		return nil
	}
	if _, err := os.Stat(created); err == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return exit(ExitFailure, fmt.Errorf("remove %s: %w", path, err))
		}
		_ = os.Remove(created)
		fmt.Fprintf(g.io.Err, "removed %s: it did not exist before toolgate connect\n", path)
		return nil
	}
	return exit(ExitFailure, fmt.Errorf("nothing to undo: %s has no %s (toolgate connect %s was not run on it, or was undone)", path, filepath.Base(backup), id))
}

func printConnectSummary(g *globals, f *clients.File, res *clients.ConnectResult, t clients.Target, from string, dry bool) {
	w := g.io.Err
	verb := "connected"
	if dry {
		verb = "would connect (dry run)"
	}
	fmt.Fprintf(w, "%s %s to toolgate: %s\n", verb, f.Client.Name, f.Path)
	if len(res.Moved) > 0 {
		fmt.Fprintf(w, "moved behind toolgate (removed from the client): %s\n", strings.Join(res.Moved, ", "))
	}
	if len(res.Direct) > 0 {
		direct := append([]string(nil), res.Direct...)
		sort.Strings(direct)
		fmt.Fprintf(w, "still reached directly, around the approval chain: %s (toolgate import %s --write, then connect --move)\n",
			strings.Join(direct, ", "), f.Client.ID)
	}
	if t.StartupTimeoutSec > 0 {
		fmt.Fprintf(w, "startup: the toolgate entry has startup_timeout_sec = %d, above the time toolgate's first list may wait for slow servers\n", t.StartupTimeoutSec)
	} else if f.Client.StartupTimeout != "" {
		fmt.Fprintf(w, "startup: %s; toolgate's first list waits at most serve { initial_list_wait } (default 8s) for slow servers\n", f.Client.StartupTimeout)
	}
	if !dry {
		fmt.Fprintf(w, "undo: toolgate connect %s --undo", f.Client.ID)
		if from != "" {
			fmt.Fprintf(w, " --from %s", f.Path)
		}
		fmt.Fprintln(w)
	}
}
