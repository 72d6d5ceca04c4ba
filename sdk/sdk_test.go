package sdk_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/sdk"
)

func TestObjectTypeIsDeterministicJSON(t *testing.T) {
	got := sdk.ObjectOf(map[string]string{"b": sdk.TypeBool, "a": sdk.ListOf(sdk.TypeString), `q"`: sdk.MapOf(sdk.TypeNumber)})
	want := `["object",{"a":["list","string"],"b":"bool","q\"":["map","number"]}]`
	if got != want {
		t.Errorf("ObjectOf = %s, want %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("ObjectOf is not JSON")
	}
}

func TestDiagnosticText(t *testing.T) {
	for _, tt := range []struct {
		d    sdk.Diagnostic
		want string
	}{
		{sdk.Diagnostic{Summary: "invalid pattern", Detail: "missing )", AttributePath: []string{"rule", "2", "pattern"}},
			"rule.2.pattern: invalid pattern: missing )"},
		{sdk.Diagnostic{Summary: "no rules"}, "no rules"},
	} {
		if got := tt.d.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if !sdk.HasErrors([]sdk.Diagnostic{{Severity: sdk.SeverityWarning}, {}}) {
		t.Error("a diagnostic with the zero severity must refuse the configuration")
	}
	if sdk.HasErrors([]sdk.Diagnostic{{Severity: sdk.SeverityWarning}}) {
		t.Error("a warning must not refuse the configuration")
	}
}

func TestPluginErrorIsNotASentinel(t *testing.T) {
	err := error(&sdk.PluginError{Msg: "x"})
	for _, s := range []error{sdk.ErrPluginExited, sdk.ErrPluginUnavailable, sdk.ErrBadResponse, sdk.ErrNotConfigured} {
		if errors.Is(err, s) {
			t.Errorf("a plugin's own error matches %v", s)
		}
	}
}

func TestNewLoggerTakesTheHostsLevel(t *testing.T) {
	for _, tt := range []struct {
		env       string
		wantDebug bool
		wantInfo  bool
	}{
		{"debug", true, true},
		{"TRACE", true, true},
		{"warn", false, false},
		{"", false, true},       // unset: info
		{"chatty", false, true}, // unknown: info
	} {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(sdk.EnvLogLevel, tt.env)
			l := sdk.NewLogger("p")
			if l.IsDebug() != tt.wantDebug || l.IsInfo() != tt.wantInfo {
				t.Errorf("level %q: IsDebug=%v IsInfo=%v, want %v %v", tt.env, l.IsDebug(), l.IsInfo(), tt.wantDebug, tt.wantInfo)
			}
		})
	}
}
