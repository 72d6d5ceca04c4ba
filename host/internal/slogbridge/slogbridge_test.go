package slogbridge

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestBridgeKeepsLevelsAndAttributes(t *testing.T) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info, DisableTime: true})
	s := New(l).With("server", "files").WithGroup("req")

	s.Debug("hidden", "k", 1)
	s.Warn("dropped tool", "name", "bad", slog.Group("why", "code", 7))

	got := buf.String()
	if strings.Contains(got, "hidden") {
		t.Errorf("debug record leaked past an info logger:\n%s", got)
	}
	for _, want := range []string{"[WARN]", "dropped tool", "server=files", "req.name=bad", "req.why.code=7"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestNilLoggerDiscards(t *testing.T) {
	New(nil).Error("nothing happens")
}

func TestNullLoggerIsDisabled(t *testing.T) {
	if New(hclog.NewNullLogger()).Enabled(t.Context(), slog.LevelError) {
		t.Error("a null logger must not make go-sdk build log records")
	}
}

// TestChattyInfoIsDebug: a chatty library's Info lines (go-sdk's session
// lifecycle) stay out of an info log and show at debug; its warnings
// stay warnings.
func TestChattyInfoIsDebug(t *testing.T) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info, DisableTime: true})
	NewChatty(l).Info("server connecting")
	NewChatty(l).Warn("slow client")
	if got := buf.String(); strings.Contains(got, "server connecting") || !strings.Contains(got, "[WARN]  slow client") {
		t.Errorf("at info level:\n%s", got)
	}
	buf.Reset()
	l.SetLevel(hclog.Debug)
	NewChatty(l).Info("server connecting")
	if got := buf.String(); !strings.Contains(got, "[DEBUG] server connecting") {
		t.Errorf("at debug level, want the line at DEBUG:\n%s", got)
	}
}
