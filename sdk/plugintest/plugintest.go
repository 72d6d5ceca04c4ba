package plugintest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/internal/wire"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// Hook serves impl in-process and returns the host's client of it (a
// [hook.Hook], plus Info and Configure). The connection is closed when the
// test ends.
func Hook(t testing.TB, impl hook.Hook) *hook.Client {
	t.Helper()
	return dispense[*hook.Client](t, hook.PluginName, &hook.GRPCPlugin{Impl: impl})
}

// Guardian serves impl in-process and returns the host's client of it.
func Guardian(t testing.TB, impl guardian.Reviewer) *guardian.Client {
	t.Helper()
	return dispense[*guardian.Client](t, guardian.PluginName, &guardian.GRPCPlugin{Impl: impl})
}

// Launcher serves impl in-process and returns the host's client of it.
// Processes still running when the test ends are killed by the shim when
// the connection closes.
func Launcher(t testing.TB, impl launcher.Launcher) *launcher.Client {
	t.Helper()
	return LauncherWith(t, impl, launcher.ClientOptions{})
}

// LauncherWith is [Launcher] with client options (shorter shutdown graces,
// a logger).
func LauncherWith(t testing.TB, impl launcher.Launcher, opts launcher.ClientOptions) *launcher.Client {
	t.Helper()
	return dispense[*launcher.Client](t, launcher.PluginName, &launcher.GRPCPlugin{Impl: impl, ClientOptions: opts})
}

func dispense[C any](t testing.TB, name string, p plugin.Plugin) C {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{name: p})
	// Only client.Close: it shuts the server down through go-plugin's
	// controller. Also calling server.Stop races inside go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(name)
	if err != nil {
		t.Fatalf("dispensing %s plugin: %v", name, err)
	}
	c, ok := raw.(C)
	if !ok {
		t.Fatalf("dispensing %s plugin: got %T", name, raw)
	}
	return c
}

// BinaryOptions configures [StartBinary].
type BinaryOptions struct {
	// Env is added to the test's environment for the plugin process.
	Env []string
	// LogLevel is passed as sdk.EnvLogLevel; "" means "debug".
	LogLevel string
	// Logger receives go-plugin's and the plugin's log lines; nil logs
	// through t.Logf.
	Logger hclog.Logger
	// StartTimeout bounds the start and handshake; zero means 30 s.
	StartTimeout time.Duration
	// Launcher configures the client of a launcher plugin.
	Launcher launcher.ClientOptions
}

// Binary is a plugin process started by [StartBinary].
type Binary struct {
	// Client is go-plugin's client of the process (Kill, Exited, ...).
	Client *plugin.Client
	// Plugin is the dispensed client: *hook.Client, *guardian.Client or
	// *launcher.Client, according to the kind.
	Plugin any
}

// RunBinary starts the plugin binary at path as the host would (go-plugin
// handshake, gRPC only, AutoMTLS, SIGKILL if the test binary dies) and
// returns the dispensed client: a *hook.Client, *guardian.Client or
// *launcher.Client according to kind. It fails the test if the plugin
// does not start; the process is killed when the test ends.
func RunBinary(t testing.TB, path string, kind sdk.Kind) any {
	t.Helper()
	b, err := StartBinary(t, path, kind, BinaryOptions{})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return b.Plugin
}

// StartBinary is [RunBinary] with options, returning the start error
// instead of failing the test, for tests of plugins that must not start.
func StartBinary(t testing.TB, path string, kind sdk.Kind, opts BinaryOptions) (*Binary, error) {
	t.Helper()
	var plugins map[int]plugin.PluginSet
	var name string
	switch kind {
	case sdk.KindHook:
		plugins, name = hook.VersionedPlugins(nil), hook.PluginName
	case sdk.KindGuardian:
		plugins, name = guardian.VersionedPlugins(nil), guardian.PluginName
	case sdk.KindLauncher:
		plugins, name = launcher.VersionedPlugins(nil, opts.Launcher), launcher.PluginName
	default:
		return nil, fmt.Errorf("starting plugin %s: unknown kind %q; use sdk.KindHook, sdk.KindGuardian or sdk.KindLauncher", path, kind)
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "debug"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{
			Name:   "plugin",
			Level:  hclog.LevelFromString(opts.LogLevel),
			Output: logWriter{t},
		})
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	cmd := exec.Command(path)
	cmd.Env = append(append(os.Environ(), opts.Env...), sdk.EnvLogLevel+"="+opts.LogLevel)
	// A cell (internal/contain) makes the plugin die with the test
	// binary, even if the test binary is killed (go-plugin alone would
	// leave it running), and holds what the plugin starts.
	cell, _ := contain.Default().NewCell("plugintest")
	cell.Prepare(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: plugins,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           opts.Logger,
		StartTimeout:     opts.StartTimeout,
		GRPCDialOptions:  wire.DialOptions(),
	})
	t.Cleanup(func() {
		client.Kill()
		_ = cell.Close()
	})
	rpc, err := client.Client()
	if cmd.Process != nil {
		if cerr := cell.Started(cmd.Process.Pid); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("starting plugin %s: %w", path, err)
	}
	raw, err := rpc.Dispense(name)
	if err != nil {
		return nil, fmt.Errorf("dispensing %s plugin from %s: %w", kind, path, err)
	}
	return &Binary{Client: client, Plugin: raw}, nil
}

// logWriter feeds hclog lines to t.Logf.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
