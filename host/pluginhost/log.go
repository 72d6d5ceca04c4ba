package pluginhost

import "github.com/hashicorp/go-hclog"

// goPluginLifecycle are the messages go-plugin itself logs about a plugin
// process ending. pluginhost reports the same moments (with the block's
// name, the reason and what happens next, plus an event), and go-plugin
// logs them as errors even when the host ended the process on purpose.
var goPluginLifecycle = map[string]bool{
	"plugin process exited":            true,
	"plugin failed to exit gracefully": true,
}

// quietLifecycle is the logger handed to go-plugin, which re-emits the
// plugin's own log lines through it. It demotes goPluginLifecycle
// messages to Debug, passes everything else through at its level, and
// drops the "@module" a plugin's JSON line carries: the host's logger
// already names the plugin (plugin.<block>.<binary>), and in JSON output
// the plugin's module would replace that name.
type quietLifecycle struct{ hclog.Logger }

func (l quietLifecycle) Log(level hclog.Level, msg string, args ...any) {
	if level > hclog.Debug && goPluginLifecycle[msg] {
		level = hclog.Debug
	}
	l.Logger.Log(level, msg, withoutModule(args)...)
}

// withoutModule returns args without an "@module" key and its value.
func withoutModule(args []any) []any {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == "@module" {
			return append(append(make([]any, 0, len(args)-2), args[:i]...), args[i+2:]...)
		}
	}
	return args
}

func (l quietLifecycle) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l quietLifecycle) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l quietLifecycle) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l quietLifecycle) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l quietLifecycle) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l quietLifecycle) Named(name string) hclog.Logger { return quietLifecycle{l.Logger.Named(name)} }
func (l quietLifecycle) ResetNamed(name string) hclog.Logger {
	return quietLifecycle{l.Logger.ResetNamed(name)}
}
func (l quietLifecycle) With(args ...any) hclog.Logger { return quietLifecycle{l.Logger.With(args...)} }
