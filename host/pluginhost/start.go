package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/hcl/v2"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// hostAPIVersions are the API versions of each kind's service this host
// implements, oldest first.
var hostAPIVersions = []string{sdk.APIVersion}

// grpcDialOptions fix the flow-control window of what the host receives
// from a plugin at 1 MiB, as the SDK fixes what its plugins receive: a
// fixed window turns off gRPC's bandwidth-delay probing, whose PING round
// trips slow a launcher's many small MCP lines.
var grpcDialOptions = []grpc.DialOption{
	grpc.WithInitialWindowSize(1 << 20),
	grpc.WithInitialConnWindowSize(1 << 20),
}

// pluginEnvNames are the only variables of the host's environment a
// plugin process gets: enough to find programs, a home and a temporary
// directory (go-plugin's unix socket lives there), and a locale.
var pluginEnvNames = []string{"PATH", "HOME", "TMPDIR", "LANG"}

// isRefusal reports whether a start failure is one that starting again
// cannot fix: the plugin is refused until its block changes or the
// configuration is applied again.
func isRefusal(err error) bool {
	return errors.Is(err, ErrChecksumMismatch) || errors.Is(err, ErrIncompatible) ||
		errors.Is(err, ErrConfig) || errors.Is(err, ErrBinary)
}

// start runs the binary, negotiates, and configures the plugin. Fields of
// p are set as far as the start got (p.client as soon as it exists, so
// that the keeper can kill it on failure).
func (in *instance) start(p *process, block config.Plugin, env *config.Environment) error {
	binary, err := in.checkBinary(p, block)
	if err != nil {
		return err
	}
	if in.h.afterVerify != nil {
		in.h.afterVerify(block.Path)
	}
	set, dispense := in.pluginSet()
	cmd := exec.Command(binary)
	cmd.Env = in.h.pluginEnv(block.EnvVars)
	// Its cell (internal/contain) kills the plugin when the host dies,
	// even by SIGKILL, when go-plugin gets no chance to stop it, and holds
	// what the plugin starts.
	cell, err := contain.Default().NewCell("plugin-" + in.name)
	if err != nil {
		in.log.Warn("plugin runs with weaker containment", "error", err)
	}
	p.cell = cell
	cell.Prepare(cmd)
	p.cmd = cmd
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: set,
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           quietLifecycle{in.log},
		StartTimeout:     in.h.opts.StartTimeout,
		GRPCDialOptions:  grpcDialOptions,
	})
	rpc, err := p.client.Client()
	if cmd.Process != nil {
		p.pid = cmd.Process.Pid
		if cerr := cell.Started(p.pid); cerr != nil && err == nil {
			return fmt.Errorf("plugin %q: %w", in.name, cerr) // the keeper kills it
		}
	}
	if err != nil {
		return in.handshakeError(block, cmd, err)
	}
	p.protocol = p.client.NegotiatedVersion()
	raw, err := rpc.Dispense(dispense)
	if err != nil {
		return fmt.Errorf("%w: plugin %q (%s) does not serve a %s plugin: %v; check kind in its block (%s)",
			ErrIncompatible, in.name, block.Path, block.Kind, err, where(block.DeclRange))
	}
	pc, ok := raw.(pluginClient)
	if !ok {
		return fmt.Errorf("%w: plugin %q: dispensed %T, which is not a toolgate plugin client", ErrIncompatible, in.name, raw)
	}
	p.plugin, p.exited = pc, pc.Exited()

	ctx, cancel := context.WithTimeout(in.stopCtx, callTimeout(block))
	defer cancel()
	info, err := pc.Info(ctx)
	if errors.Is(err, sdk.ErrBadResponse) {
		return fmt.Errorf("%w: plugin %q (%s, block at %s): %w", ErrIncompatible, in.name, block.Path, where(block.DeclRange), err)
	}
	if err != nil {
		return fmt.Errorf("plugin %q: asking for its Info: %w", in.name, err)
	}
	p.info = info
	if p.api, err = negotiateAPI(in.name, block, info); err != nil {
		return err
	}
	if in.kind == sdk.KindHook {
		if err := checkHookEvents(in.name, block, info); err != nil {
			return err
		}
	}

	body, fallback := block.Config, block.DeclRange
	if env != nil && env.Config != nil {
		body, fallback = env.Config, env.DeclRange
	}
	payload, err := decodeConfig(in.name, body, info.ConfigSchema)
	if err != nil {
		return err
	}
	diags, err := pc.Configure(ctx, payload)
	if err != nil {
		return fmt.Errorf("plugin %q: sending its configuration: %w", in.name, err)
	}
	hd := pluginDiagnostics(in.name, diags, body, info.ConfigSchema, fallback)
	for _, d := range hd {
		if d.Severity == hcl.DiagWarning {
			in.log.Warn("plugin configuration warning", "warning", d.Error())
		}
	}
	if hd.HasErrors() {
		return &ConfigError{Plugin: in.name, Diags: hd}
	}
	return nil
}

func callTimeout(block config.Plugin) time.Duration {
	if block.Timeout > 0 {
		return block.Timeout
	}
	return config.DefaultHookTimeout
}

// pluginSet is the versioned plugin set to negotiate for the instance's
// kind and the name to dispense.
func (in *instance) pluginSet() (map[int]plugin.PluginSet, string) {
	switch in.kind {
	case sdk.KindGuardian:
		return guardian.VersionedPlugins(nil), guardian.PluginName
	case sdk.KindLauncher:
		opts := in.h.opts.Launcher
		if opts.Logger == nil {
			opts.Logger = in.log
		}
		return launcher.VersionedPlugins(nil, opts), launcher.PluginName
	}
	return hook.VersionedPlugins(nil), hook.PluginName
}

// pluginEnv is the whole environment of a plugin process: the few basics,
// the names the block lists in env_vars (only if set), and the log level
// (go-plugin adds its handshake variables).
func (h *Plugins) pluginEnv(extra []string) []string {
	env := make([]string, 0, len(pluginEnvNames)+len(extra)+1)
	for _, k := range append(pluginEnvNames[:len(pluginEnvNames):len(pluginEnvNames)], extra...) {
		if v, ok := h.opts.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, sdk.EnvLogLevel+"="+levelName(h.log.GetLevel()))
}

// levelName is the sdk.EnvLogLevel value for the host logger's level: a
// plugin then produces no lines the host would drop anyway.
func levelName(l hclog.Level) string {
	switch l {
	case hclog.Trace:
		return "trace"
	case hclog.Debug:
		return "debug"
	case hclog.Info:
		return "info"
	case hclog.Warn:
		return "warn"
	case hclog.Error:
		return "error"
	}
	return "off"
}

// checkBinary refuses a binary that cannot be run or does not match the
// block's sha256 pin, before anything executes it, and returns the path
// to execute: block.Path without a pin; with one, the verified private
// copy (see pinnedCopy), recorded in p.pinnedDir for removal.
func (in *instance) checkBinary(p *process, block config.Plugin) (string, error) {
	f, err := os.Open(block.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: plugin %q: %s does not exist; build the plugin, or fix path in its block (%s)",
			ErrBinary, in.name, block.Path, where(block.DeclRange))
	case err != nil:
		return "", fmt.Errorf("%w: plugin %q: %v; make %s readable and executable, or fix path in its block (%s)",
			ErrBinary, in.name, err, block.Path, where(block.DeclRange))
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && (st.IsDir() || st.Mode().Perm()&0o111 == 0) {
		err = errors.New("not an executable file")
	}
	if err != nil {
		return "", fmt.Errorf("%w: plugin %q: %s: %v; point path in its block (%s) at the plugin's executable",
			ErrBinary, in.name, block.Path, err, where(block.DeclRange))
	}
	if block.SHA256 == "" {
		return block.Path, nil
	}
	dir, binary, actual, err := pinnedCopy(f, block.Path)
	if err != nil {
		return "", fmt.Errorf("%w: plugin %q: %v; the plugin was not started. Check that %s is readable and that the temporary directory (TMPDIR) is writable",
			ErrBinary, in.name, err, block.Path)
	}
	in.mu.Lock()
	in.checksum = checksumState{checked: true, mismatch: actual != block.SHA256, actual: actual}
	in.mu.Unlock()
	if actual != block.SHA256 {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("%w: plugin %q: %s has sha256 %s, but its block (%s) expects %s; "+
			"the plugin was not started. If you rebuilt or upgraded it on purpose, check the new binary and set sha256 = %q; "+
			"otherwise restore the binary the pin names",
			ErrChecksumMismatch, in.name, block.Path, actual, where(block.DeclRange), block.SHA256, actual)
	}
	p.pinnedDir = dir
	return binary, nil
}

var pluginVersionRE = regexp.MustCompile(`Plugin version: (\S+)`)

// handshakeError explains why go-plugin could not start the plugin.
// go-plugin's errors are plain text, so this matches on it; anything
// unrecognized is passed on as is.
func (in *instance) handshakeError(block config.Plugin, cmd *exec.Cmd, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		line := strings.TrimPrefix(msg, "Unrecognized remote plugin message: ")
		line, _, _ = strings.Cut(line, "\n")
		return fmt.Errorf("%w: plugin %q (%s) printed %q on stdout instead of the go-plugin handshake. "+
			"A plugin must write nothing to stdout before Serve: log to stderr (sdk.NewLogger) instead. "+
			"If %s is not a toolgate plugin, fix path in its block (%s)",
			ErrHandshake, in.name, block.Path, line, block.Path, where(block.DeclRange))
	case strings.Contains(msg, "incompatible API version with plugin"):
		theirs := "unknown"
		if m := pluginVersionRE.FindStringSubmatch(msg); m != nil {
			theirs = strings.TrimSuffix(m[1], ",")
		}
		return fmt.Errorf("%w: plugin %q (%s) speaks go-plugin protocol version %s and this host speaks version %d: no common version. "+
			"Rebuild the plugin against the toolgate SDK of this host (sdk.ProtocolVersion %d), or use a toolgate release that speaks version %s",
			ErrIncompatible, in.name, block.Path, theirs, sdk.ProtocolVersion, sdk.ProtocolVersion, theirs)
	case strings.Contains(msg, "incompatible core API version"):
		return fmt.Errorf("%w: plugin %q (%s) was built with an incompatible go-plugin library: %s",
			ErrIncompatible, in.name, block.Path, firstLine(msg))
	case strings.Contains(msg, "plugin exited before we could connect"):
		return fmt.Errorf("%w: plugin %q (%s) exited before completing the go-plugin handshake (%s). "+
			"Is it a toolgate plugin? Its log lines under plugin.%s may say why",
			ErrHandshake, in.name, block.Path, exitText(cmd), block.Name)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w: plugin %q (%s) did not complete the go-plugin handshake within %s; "+
			"it may be hung, or not a toolgate plugin", ErrHandshake, in.name, block.Path, in.h.opts.StartTimeout)
	}
	return fmt.Errorf("%w: plugin %q (%s): %v", ErrHandshake, in.name, block.Path, err)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// negotiateAPI picks the highest API version both sides implement.
func negotiateAPI(name string, block config.Plugin, info sdk.Info) (string, error) {
	var common []string
	for _, v := range info.APIVersions {
		if slices.Contains(hostAPIVersions, v) {
			common = append(common, v)
		}
	}
	if len(common) == 0 {
		theirs := strings.Join(info.APIVersions, ", ")
		if theirs == "" {
			theirs = "none"
		}
		return "", fmt.Errorf("%w: plugin %q (%s) implements API version(s) %s of the %s protocol and this host implements %s: no common version. "+
			"Rebuild the plugin against the toolgate SDK of this host, or use a toolgate release that implements one of its versions",
			ErrIncompatible, name, block.Path, theirs, block.Kind, strings.Join(hostAPIVersions, ", "))
	}
	slices.SortFunc(common, compareVersions)
	return common[len(common)-1], nil
}

// hookEventCapabilities maps the events a block lists (config spelling)
// to the capability a hook plugin declares in its Info for each.
var hookEventCapabilities = map[string]hook.Event{
	EventPreToolUse:        hook.EventPreToolUse,
	EventPermissionRequest: hook.EventPermissionRequest,
	EventPostToolUse:       hook.EventPostToolUse,
	EventPreResourceRead:   hook.EventPreResourceRead,
	EventPrePromptGet:      hook.EventPrePromptGet,
}

// checkHookEvents refuses a hook block whose events list names an event
// the plugin does not handle: the SDK client would answer "no opinion"
// for it without asking the plugin, so the user's hook would silently
// never run for that event.
func checkHookEvents(name string, block config.Plugin, info sdk.Info) error {
	var missing []string
	for _, ev := range block.Events {
		if c, ok := hookEventCapabilities[ev]; !ok || !info.Has(string(c)) {
			missing = append(missing, ev)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var handled []string
	for _, ev := range []string{EventPreToolUse, EventPermissionRequest, EventPostToolUse, EventPreResourceRead, EventPrePromptGet} {
		if info.Has(string(hookEventCapabilities[ev])) {
			handled = append(handled, ev)
		}
	}
	handles := "no event"
	if len(handled) > 0 {
		handles = strings.Join(handled, ", ")
	}
	return fmt.Errorf("%w: plugin %q (%s) does not handle %s, which events in its block (%s) lists; it handles %s. "+
		"Remove %s from events, or use a plugin that handles it",
		ErrIncompatible, name, block.Path, strings.Join(missing, ", "), where(block.DeclRange), handles, strings.Join(missing, ", "))
}

// compareVersions orders numeric versions numerically, others as text.
func compareVersions(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x - y
	}
	return strings.Compare(a, b)
}

func where(r hcl.Range) string {
	if r.Filename == "" {
		return "built in"
	}
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}
