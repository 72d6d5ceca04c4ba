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

// quietLifecycle is the logger handed to go-plugin: it demotes
// goPluginLifecycle messages to Debug and passes everything else — the
// plugin's own log lines among it — through at its level.
type quietLifecycle struct{ hclog.Logger }

func (l quietLifecycle) level(level hclog.Level, msg string) hclog.Level {
	if level > hclog.Debug && goPluginLifecycle[msg] {
		return hclog.Debug
	}
	return level
}

func (l quietLifecycle) Log(level hclog.Level, msg string, args ...any) {
	l.Logger.Log(l.level(level, msg), msg, args...)
}

func (l quietLifecycle) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l quietLifecycle) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l quietLifecycle) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l quietLifecycle) Named(name string) hclog.Logger { return quietLifecycle{l.Logger.Named(name)} }
func (l quietLifecycle) ResetNamed(name string) hclog.Logger {
	return quietLifecycle{l.Logger.ResetNamed(name)}
}
func (l quietLifecycle) With(args ...any) hclog.Logger { return quietLifecycle{l.Logger.With(args...)} }
