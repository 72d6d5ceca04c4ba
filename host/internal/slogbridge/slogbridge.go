package slogbridge

import (
	"context"
	"log/slog"
	"slices"

	"github.com/hashicorp/go-hclog"
)

// New returns a slog.Logger writing to l. A nil l discards everything.
func New(l hclog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(&handler{log: l})
}

// NewChatty is New for a library that reports routine events at Info:
// they are logged at Debug. go-sdk's server says "server connecting",
// "session initialized" and the like for every session, which toolgate's
// own session lines already say, and a 2026-07-28 client over HTTP opens
// a session per request: three Info lines per request otherwise.
func NewChatty(l hclog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(&handler{log: l, infoAsDebug: true})
}

type handler struct {
	log         hclog.Logger
	infoAsDebug bool   // see NewChatty
	attrs       []any  // flattened key/value pairs from WithAttrs
	group       string // dotted group prefix from WithGroup
}

func (h *handler) Enabled(_ context.Context, lvl slog.Level) bool {
	cur := h.log.GetLevel()
	// A null logger reports NoLevel: nothing is kept, so nothing is built.
	return cur != hclog.NoLevel && cur != hclog.Off && cur <= h.level(lvl)
}

// level is the hclog level a record of lvl is logged at.
func (h *handler) level(lvl slog.Level) hclog.Level {
	l := toHCLog(lvl)
	if h.infoAsDebug && l == hclog.Info {
		return hclog.Debug
	}
	return l
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	kv := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		kv = appendAttr(kv, h.group, a)
		return true
	})
	h.log.Log(h.level(r.Level), r.Message, kv...)
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		n.attrs = appendAttr(n.attrs, h.group, a)
	}
	return &n
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.group = join(h.group, name)
	return &n
}

func appendAttr(kv []any, group string, a slog.Attr) []any {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return kv
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, sub := range a.Value.Group() {
			kv = appendAttr(kv, join(group, a.Key), sub)
		}
		return kv
	}
	return append(kv, join(group, a.Key), a.Value.Any())
}

func join(group, key string) string {
	switch {
	case group == "":
		return key
	case key == "":
		return group
	}
	return group + "." + key
}

func toHCLog(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	}
	return hclog.Error
}
