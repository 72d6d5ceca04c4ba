package mcpdemo

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstModernProtocolVersion is the first protocol version that replaced the
// initialize handshake with server/discover. Versions compare as dates, so a
// plain string comparison orders them.
const firstModernProtocolVersion = "2026-07-28"

// Config is the parsed command line. Its zero value (plus Name) is a stdio
// server with the default tools.
type Config struct {
	// Transport and identity.
	HTTPAddr     string // serve Streamable HTTP at /mcp on this address; "" = stdio
	Name         string
	Instructions string
	Root         string // write_file/delete_file stay under it; "" = cwd at call time

	// Tool sets.
	NoDefaultTools   bool
	GeneratedTools   int
	LongNames        bool
	CollidingNames   bool
	HiddenTool       bool
	CrashTool        bool
	HostileText      bool
	ConnectorMeta    bool
	AnnotationMatrix bool

	// Resources: --resources N (0 = no resources, templates or prompts).
	Resources int

	// Listing behaviour.
	PageSize     int
	RepeatCursor bool

	// Misbehaviour on purpose.
	CrashAfter      int
	StderrNoise     bool
	StderrFlood     int
	IgnoreUnknown   bool
	FailInitialize  bool
	HangInitialize  bool
	InitializeGate  string // host:port; "" = off
	ExitImmediately int    // < 0: disabled
	IgnoreSIGTERM   bool
	SpawnChild      bool
	// EscapingChildPidFile: --spawn-escaping-child writes the child\'s pid here.
	EscapingChildPidFile string
	SleepForever         bool // hidden: what the --spawn-child grandchild runs
	// FamilyPidFile: --spawn-family writes the pids of the server, its
	// three group children and the setsid grandchild here.
	FamilyPidFile  string
	FamilyParent   bool // hidden: the --spawn-family child that starts the setsid grandchild
	StrayResponses bool
	BadTools       bool
	// LeakSecrets: leak_secrets returns SecretCanaries and prints them
	// to stderr; DeepSchema: tools/list also lists deep_schema with an
	// input schema that many levels deep (stdio); DeepResult: deep_result
	// returns structuredContent nested that deep; HugeDescriptions:
	// three tools with 4 MiB descriptions.
	LeakSecrets      bool
	DeepSchema       int
	DeepResult       int
	HugeDescriptions bool
	ListChangedStorm time.Duration // 0: off

	// Observability and capabilities.
	CallLog                 string
	SandboxCapabilities     []string
	AddToolAfterInitialized string
	LogMessages             bool
	ProtocolVersions        []string
}

// sleepForeverFlag is internal plumbing for --spawn-child, left out of
// --help on purpose.
const sleepForeverFlag = "sleep-forever"

// familyParentFlag is internal plumbing for --spawn-family: the first
// child, which starts the setsid grandchild and prints its pid.
const familyParentFlag = "family-parent"

// ParseArgs parses the mcp-demo command line (without the program name).
// It returns flag.ErrHelp for -h/--help, leaving printing Usage to the
// caller; every other error has already been printed to stderr.
func ParseArgs(args []string, stderr io.Writer) (*Config, error) {
	cfg := &Config{}
	fs := newFlagSet(cfg, stderr)
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "run mcp-demo --help for usage")
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("parse arguments: unexpected positional arguments %q; mcp-demo takes flags only, see --help", fs.Args())
		fmt.Fprintln(stderr, err)
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, err
	}
	return cfg, nil
}

// Usage returns the --help text.
func Usage() string {
	var b strings.Builder
	writeUsage(&b, newFlagSet(&Config{}, io.Discard))
	return b.String()
}

func newFlagSet(cfg *Config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mcp-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // ParseArgs's caller prints Usage where it belongs

	fs.StringVar(&cfg.HTTPAddr, "http", "", "serve Streamable HTTP (stateful sessions) at http://`ADDR`/mcp instead of stdio; prints \"listening on http://HOST:PORT/mcp\" to stderr once listening (port 0 is replaced by the real port)")
	fs.StringVar(&cfg.Name, "name", "mcp-demo", "server `NAME` reported in serverInfo")
	fs.StringVar(&cfg.Instructions, "instructions", "", "server instructions `TEXT` returned by initialize and server/discover")
	fs.StringVar(&cfg.Root, "root", "", "`DIR` that write_file and delete_file may touch (default: the working directory)")

	fs.BoolVar(&cfg.NoDefaultTools, "no-default-tools", false, "do not register the default tool set (echo, add, ..., mutate_tools)")
	fs.IntVar(&cfg.GeneratedTools, "tools", 0, "register `N` generated tools gen_00001..gen_N, each with a distinct English description")
	fs.BoolVar(&cfg.LongNames, "long-names", false, "register tools whose names are 130 and 200 characters long")
	fs.BoolVar(&cfg.CollidingNames, "colliding-names", false, "register tools tool-name, tool_name and tool.name")
	fs.BoolVar(&cfg.CrashTool, "crash-tool", false, "register crash, which prints a panic line to stderr and exits with status 3 without answering the call")
	fs.BoolVar(&cfg.HostileText, "hostile-text", false, "put terminal escapes and a bidi override in a tool's name, description and result, and in a stderr line at start")
	fs.BoolVar(&cfg.HiddenTool, "hidden-tool", false, "register hidden_tool with _meta.ui.visibility = [\"app\"]")
	fs.BoolVar(&cfg.ConnectorMeta, "connector-meta", false, "give every tool the untrusted _meta keys connector_id, connector_name, connector_display_name, connector_description, connectorDescription and the harmless key keep_me")
	fs.BoolVar(&cfg.AnnotationMatrix, "annotation-matrix", false, "register hint_ro<0|1>_d<u|1|0>_ow<u|1|0> for every annotation combination, plus hint_none without annotations")

	fs.IntVar(&cfg.Resources, "resources", 0, "offer `N` text resources demo://doc/00001..N, the template demo://item/{id}, the prompt greet (completed), subscriptions, and the tools touch_resource and add_resource")
	fs.IntVar(&cfg.PageSize, "page-size", 0, "paginate list results `N` at a time (0 = go-sdk default)")
	fs.BoolVar(&cfg.RepeatCursor, "repeat-cursor", false, "broken pagination: every tools/list page is the first page and carries the same nextCursor")

	fs.IntVar(&cfg.CrashAfter, "crash-after", 0, "exit with status 3 right after the response to the `N`th tools/call has been written")
	fs.IntVar(&cfg.StderrFlood, "stderr-flood", 0, "at start, write `N` lines \"mcp-demo: flood line I\" to stderr as fast as possible")
	fs.BoolVar(&cfg.StderrNoise, "stderr-noise", false, "write a line to stderr at start and for every received message, naming its method")
	fs.BoolVar(&cfg.IgnoreUnknown, "ignore-unknown", false, "act as an old server: never answer requests with methods it does not know (notably server/discover) and offer only pre-2026-07-28 protocol versions")
	fs.BoolVar(&cfg.HangInitialize, "hang-initialize", false, "stdio: never answer initialize or server/discover")
	fs.StringVar(&cfg.InitializeGate, "initialize-gate", "", "stdio: hold initialize and server/discover until a TCP connection to `ADDR` delivers one byte (a server as slow to start as the test wants, without timers); the session ends if the connection fails")
	fs.BoolVar(&cfg.FailInitialize, "fail-initialize", false, "answer initialize and server/discover with the JSON-RPC error \""+failInitializeMessage+"\"")
	fs.IntVar(&cfg.ExitImmediately, "exit-immediately", -1, "print \""+startupFailureMessage+"\" to stderr and exit with status `CODE` before reading anything")
	fs.BoolVar(&cfg.IgnoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM and stdin EOF; only SIGKILL ends the process")
	fs.StringVar(&cfg.EscapingChildPidFile, "spawn-escaping-child", "", "start a long-sleeping child in a session of its own (setsid) that inherits stdout and stderr, and write its pid to `FILE` (Unix)")
	fs.BoolVar(&cfg.SpawnChild, "spawn-child", false, "start a long-sleeping child in the same process group and print \"child pid N\" to stderr")
	fs.BoolVar(&cfg.StrayResponses, "stray-responses", false, "stdio: after every response, also write a response with \"id\": null and a response-shaped message without an id (both answer nothing)")
	fs.BoolVar(&cfg.BadTools, "bad-tools", false, "stdio: every tools/list answer also lists a tool named 5 (a number), one whose name holds a lone UTF-16 surrogate, and a second tool named echo")
	fs.BoolVar(&cfg.LeakSecrets, "leak-secrets", false, "register leak_secrets, which prints fake credentials of every well-known format (AWS key, ghp_, github_pat_, xoxb-, JWT, Bearer, PEM private key) to stderr and returns them")
	fs.IntVar(&cfg.DeepSchema, "deep-schema", 0, "stdio: every tools/list answer also lists deep_schema, whose input schema nests `LEVELS` object levels (each two JSON levels)")
	fs.IntVar(&cfg.DeepResult, "deep-result", 0, "register deep_result, whose structuredContent nests `DEPTH` JSON levels")
	fs.BoolVar(&cfg.HugeDescriptions, "huge-descriptions", false, "register huge_1, huge_2 and huge_3, each with a 4 MiB description")
	fs.DurationVar(&cfg.ListChangedStorm, "list-changed-storm", 0, "stdio: once notifications/initialized arrives, send notifications/tools/list_changed every `INTERVAL` (e.g. 5ms) until the session ends")
	fs.BoolVar(&cfg.SleepForever, sleepForeverFlag, false, "internal: sleep until killed (the --spawn-child child)")
	fs.StringVar(&cfg.FamilyPidFile, "spawn-family", "", "start three long-sleeping children in the server's process group, the first of which starts a grandchild in a session of its own (setsid), and append the line \"SERVER CHILD CHILD CHILD GRANDCHILD\" (pids) to `FILE` (Unix)")
	fs.BoolVar(&cfg.FamilyParent, familyParentFlag, false, "internal: the --spawn-family child that starts the setsid grandchild")

	fs.StringVar(&cfg.CallLog, "call-log", "", "append one JSON line per tools/call and per cancellation to `FILE`")
	fs.Func("sandbox-capability", "declare capabilities.experimental[`NAME`] = {} (repeatable)", func(v string) error {
		if v == "" {
			return errors.New("empty capability name")
		}
		cfg.SandboxCapabilities = append(cfg.SandboxCapabilities, v)
		return nil
	})
	fs.StringVar(&cfg.AddToolAfterInitialized, "add-tool-after-initialized", "", "add tool `NAME` once notifications/initialized arrives, announced with notifications/tools/list_changed")
	fs.BoolVar(&cfg.LogMessages, "log-messages", false, "send an info-level MCP log message for every tools/call")
	fs.Func("protocol-versions", "accept only these comma-separated protocol `VERSIONS` (e.g. 2025-06-18,2025-03-26)", func(v string) error {
		cfg.ProtocolVersions = nil
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				cfg.ProtocolVersions = append(cfg.ProtocolVersions, p)
			}
		}
		return nil
	})
	return fs
}

func (c *Config) validate() error {
	switch {
	case c.GeneratedTools < 0:
		return fmt.Errorf("validate flags: --tools %d is negative; pass 0 or more", c.GeneratedTools)
	case c.PageSize < 0:
		return fmt.Errorf("validate flags: --page-size %d is negative; pass 0 (go-sdk default) or more", c.PageSize)
	case c.StderrFlood < 0:
		return fmt.Errorf("validate flags: --stderr-flood %d is negative; pass 0 or more", c.StderrFlood)
	case c.CrashAfter < 0:
		return fmt.Errorf("validate flags: --crash-after %d is negative; pass 1 or more", c.CrashAfter)
	case c.ExitImmediately > 255:
		return fmt.Errorf("validate flags: --exit-immediately %d is not an exit status; pass 0..255", c.ExitImmediately)
	case c.DeepSchema < 0 || c.DeepResult < 0:
		return fmt.Errorf("validate flags: --deep-schema %d / --deep-result %d is negative; pass 0 (off) or more", c.DeepSchema, c.DeepResult)
	case c.ListChangedStorm < 0:
		return fmt.Errorf("validate flags: --list-changed-storm %s is negative; pass an interval such as 5ms", c.ListChangedStorm)
	case c.Name == "":
		return errors.New("validate flags: --name is empty; pass a server name")
	}
	supported := mcp.SupportedProtocolVersions()
	for _, v := range c.ProtocolVersions {
		if !slices.Contains(supported, v) {
			return fmt.Errorf("validate flags: --protocol-versions has unknown version %q; choose from %s", v, strings.Join(supported, ","))
		}
	}
	if len(c.serverProtocolVersions()) == 0 && (len(c.ProtocolVersions) > 0 || c.IgnoreUnknown) {
		return errors.New("validate flags: --protocol-versions leaves no version a legacy (--ignore-unknown) server can speak; add one before " + firstModernProtocolVersion)
	}
	return nil
}

// serverProtocolVersions is what ServerOptions.SupportedProtocolVersions
// gets: nil means every version go-sdk knows.
func (c *Config) serverProtocolVersions() []string {
	versions := c.ProtocolVersions
	if !c.IgnoreUnknown {
		return versions
	}
	if len(versions) == 0 {
		versions = mcp.SupportedProtocolVersions()
	}
	// An old server predates server/discover, so it cannot offer the
	// versions that need it.
	return slices.DeleteFunc(slices.Clone(versions), func(v string) bool { return v >= firstModernProtocolVersion })
}

func writeUsage(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	b.WriteString(usageHeader)
	b.WriteString("\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == sleepForeverFlag || f.Name == familyParentFlag {
			return
		}
		arg, text := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if arg != "" {
			fmt.Fprintf(&b, " %s", arg)
		}
		b.WriteString("\n      ")
		b.WriteString(text)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "-1" {
			fmt.Fprintf(&b, " (default %s)", strconv.Quote(f.DefValue))
		}
		b.WriteString("\n")
	})
	b.WriteString(usageFooter)
	_, _ = io.WriteString(w, b.String())
}

const usageHeader = `mcp-demo: toolgate's scriptable test MCP server.

Usage: mcp-demo [flags]

Serves MCP over stdio (the default; exits 0 when stdin reaches EOF) or over
Streamable HTTP (--http). Every behaviour below is deterministic so host
tests can drive it as a real subprocess.

Default tools (absent with --no-default-tools):
  echo {text}                 readOnly; returns the same text
  add {a, b}                  readOnly; text sum plus structuredContent {"sum": n} (outputSchema)
  write_file {path, content}  destructiveHint:false openWorldHint:false; writes under --root, isError if the path escapes it
  delete_file {path}          destructiveHint:true; deletes under --root
  image                       readOnly; a 2x2 PNG image plus a text block
  audio                       readOnly; a short WAV audio block
  resource_link               readOnly; a resource_link block
  embedded_resource           readOnly; an embedded text resource
  structured                  readOnly; structuredContent with outputSchema plus a text block
  mixed                       readOnly; text, image, audio, resource link and embedded resource together
  fail {message}              readOnly; isError:true result with that message
  slow {ms}                   readOnly; sleeps ms (stops early on cancellation) and returns {"start","end","pid"} (unix nanos)
  slow_write {ms}             like slow but with no annotations at all (not read-only)
  progress {steps}            readOnly; sends steps progress notifications for the request's token, then returns
  elicit {message}            readOnly; form elicitation (name, age, color) returning {"action","content"}
  elicit_url {message}        readOnly; URL elicitation returning {"action","content"}
  env {names}                 readOnly; JSON object of those env vars (missing = null) plus "cwd"
  pid                         readOnly; {"pid","ppid"}
  big {bytes}                 readOnly; one text block of exactly bytes bytes (deterministic)
  echo_big {data}             readOnly; returns data unchanged (large round trips)
  mutate_tools {add, remove}  adds/removes "ok" tools at runtime; each change sends tools/list_changed
`

const usageFooter = `
Exit status: 0 on stdin EOF or SIGINT/SIGTERM (HTTP), 1 on a serving error,
2 on a usage error, 3 after --crash-after, CODE for --exit-immediately.
`
