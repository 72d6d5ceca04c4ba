package configdiag_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/sdk"
)

func TestDecode(t *testing.T) {
	type cfg struct {
		A *string `json:"a"`
	}
	for _, tt := range []struct {
		raw string
		ok  bool
	}{
		{``, true}, {`null`, true}, {`{}`, true}, {`{"a": "x"}`, true},
		{`{"b": 1}`, false}, {`{"a": 1}`, false}, {`[]`, false},
	} {
		var s configdiag.Set
		var c cfg
		if got := configdiag.Decode(&s, json.RawMessage(tt.raw), &c); got != tt.ok || s.HasErrors() == tt.ok {
			t.Errorf("Decode(%q) = %v with diagnostics %v; want ok=%v", tt.raw, got, s.List(), tt.ok)
		}
	}
}

func TestDuration(t *testing.T) {
	str := func(s string) *string { return &s }
	var s configdiag.Set
	path := configdiag.Path("rule", 2, "timeout")
	if d := configdiag.Duration(&s, path, nil, time.Second); d != time.Second {
		t.Errorf("absent: %v", d)
	}
	if d := configdiag.Duration(&s, path, str("1m30s"), time.Second); d != 90*time.Second {
		t.Errorf("1m30s: %v", d)
	}
	if s.HasErrors() {
		t.Fatalf("unexpected diagnostics: %v", s.List())
	}
	configdiag.Duration(&s, path, str("0s"), time.Second)
	configdiag.Duration(&s, path, str("soon"), time.Second)
	var paths [][]string
	for _, d := range s.List() {
		if d.Severity != sdk.SeverityError {
			t.Errorf("severity %v", d.Severity)
		}
		paths = append(paths, d.AttributePath)
	}
	if diff := cmp.Diff([][]string{{"rule", "2", "timeout"}, {"rule", "2", "timeout"}}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}
