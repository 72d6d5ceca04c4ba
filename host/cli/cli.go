package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/pipeline"
	"github.com/toolgate/toolgate/host/version"
	"github.com/toolgate/toolgate/internal/safetext"
)

// Exit codes, documented in the root help.
const (
	ExitOK       = 0
	ExitFailure  = 1 // a required server failed, a call failed or was denied, a runtime error
	ExitUsage    = 2 // bad flags or an invalid configuration
	ExitDegraded = 3 // `servers`: an optional server failed
)

const exitHelp = `Exit codes:
  0  success
  1  a required server failed to start, a call failed or was denied, or a runtime error
  2  bad usage or an invalid configuration (diagnostics are printed)
  3  toolgate servers: every required server is ready but an optional one failed`

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// exit returns an error that makes Run exit with code; err may be nil
// when the command already printed why.
func exit(code int, err error) error { return &exitError{code: code, err: err} }

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Upstream answers approval prompts and elicitations of toolgate
	// call; nil means a terminal on In/Err (interactive only when In is
	// a terminal).
	Upstream pipeline.Upstream
}

// globals are the flags every command shares.
type globals struct {
	io         IO
	configPath string
	logLevel   string
	logJSON    bool
	// loadedPath is where loadConfig found the configuration, for reloads.
	loadedPath string
}

// Run executes the command line args and returns the process exit code.
// ctx is cancelled on interrupt by the caller (main).
func Run(ctx context.Context, args []string, stdio IO) int {
	if stdio.LookupEnv == nil {
		stdio.LookupEnv = os.LookupEnv
	}
	g := &globals{io: stdio}
	root := &cobra.Command{
		Use:   "toolgate",
		Short: "A governed MCP host: discover, expose, approve and execute MCP tools",
		Long: `toolgate connects to the MCP servers of an HCL configuration, lists their tools
under safe unique names, puts every call through an approval chain, and routes
approved calls to the server that owns the tool.

Configuration is found at --config, then $TOOLGATE_CONFIG, then ./toolgate.hcl,
then the user config directory (toolgate/config.hcl).

` + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.configPath, "config", "c", "", "configuration file or directory")
	pf.StringVar(&g.logLevel, "log-level", envOr(stdio.LookupEnv, "TOOLGATE_LOG", "error"), "log level: trace, debug, info, warn, error, off (env TOOLGATE_LOG)")
	pf.BoolVar(&g.logJSON, "log-json", false, "write logs as JSON lines")

	root.AddCommand(
		newValidateCmd(g),
		newServersCmd(g),
		newToolsCmd(g),
		newResourcesCmd(g),
		newPromptsCmd(g),
		newReadCmd(g),
		newCallCmd(g),
		newServeCmd(g),
		newApprovalsCmd(g),
		newApproveCmd(g),
		newDenyCmd(g),
		newSearchCmd(g),
		newPluginsCmd(g),
		newLoginCmd(g),
		newLogoutCmd(g),
		newAuditCmd(g),
		newReplayCmd(g),
		newVersionCmd(g),
		newImportCmd(g),
		newMCPCmd(g),
		newConnectCmd(g),
	)

	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stdio.Err, "Error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stdio.Err, "Error:", err)
	if strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "flag") ||
		strings.Contains(err.Error(), "arg(s)") {
		return ExitUsage
	}
	return ExitFailure
}

func envOr(lookup func(string) (string, bool), key, def string) string {
	if v, ok := lookup(key); ok && v != "" {
		return v
	}
	return def
}

// logger builds the root logger on stderr.
func (g *globals) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:              "toolgate",
		Level:             hclog.LevelFromString(g.logLevel),
		Output:            g.io.Err,
		JSONFormat:        g.logJSON,
		Color:             hclog.AutoColor,
		IndependentLevels: true,
	})
}

// loadConfig discovers and loads the configuration, printing diagnostics.
func (g *globals) loadConfig() (*config.Config, error) {
	path, err := config.Discover(g.configPath, g.io.LookupEnv)
	if err != nil {
		return nil, exit(ExitUsage, err)
	}
	g.loadedPath = path
	cfg, diags := g.load(path)
	if diags.HasErrors() {
		return nil, exit(ExitUsage, fmt.Errorf("%s: the configuration has %d error(s)", path, len(diags.Errs())))
	}
	return cfg, nil
}

// load loads the configuration at path and prints its diagnostics, if
// any, with the source excerpts they point at.
func (g *globals) load(path string) (*config.Config, hcl.Diagnostics) {
	cfg, diags := config.Load(path, config.LoadOptions{LookupEnv: g.io.LookupEnv})
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if cfg != nil {
			files = cfg.Files
		}
		_ = config.WriteDiagnostics(g.io.Err, diags, files, g.width(), g.color())
	}
	return cfg, diags
}

func (g *globals) isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// color follows the terminal, and NO_COLOR (https://no-color.org).
func (g *globals) color() bool {
	if v, ok := g.io.LookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	return g.isTerminal(g.io.Err)
}

func (g *globals) width() uint {
	if f, ok := g.io.Err.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
			return uint(w)
		}
	}
	return 100
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the toolgate version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(g.io.Out, "toolgate %s\n", version.Toolgate)
			return nil
		},
	}
}

// printJSON writes v as indented JSON: the --json output of every command.
// Bidi overrides and other invisible characters a server put in a name,
// a description or a result are written as \u escapes (safetext.JSON):
// the value is the same for a program reading it, and a person viewing
// it sees what is there.
func printJSON(g *globals, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := g.io.Out.Write(safetext.JSON(b.Bytes()))
	return err
}
