package gateway_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/testplugins/mcpdemo"
)

// TestMaxResultBytes: a result over serve's max_result_bytes reaches the
// client as a tool error that says how large it was, what the limit is
// and what to change; one under it passes unchanged. The server is
// called either way, and its session stays up: the next call works.
// toolgate refuses the answer where it reads it (mcpclient), before
// decoding it.
func TestMaxResultBytes(t *testing.T) {
	const limit = 1 << 20
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			calls := filepath.Join(t.TempDir(), "calls.jsonl")
			f := newFixture(t, "serve {\n  max_result_bytes = "+strconv.Itoa(limit)+"\n}\n",
				demoServer(t, "demo", calls, `default_tools_approval_mode = "approve"`))
			cs := p.connect(f, t, nil)

			under := call(t, cs, "mcp__demo__big", map[string]any{"bytes": limit / 2})
			if under.IsError || text(under) != mcpdemo.BigText(limit/2) {
				t.Errorf("a result of half the limit did not pass unchanged: isError %v, %d bytes of text", under.IsError, len(text(under)))
			}

			over := call(t, cs, "mcp__demo__big", map[string]any{"bytes": 2 * limit})
			msg := text(over)
			if !over.IsError {
				t.Fatalf("a result of twice the limit passed: %d bytes of text", len(msg))
			}
			for _, want := range []string{"demo/big", "max_result_bytes = " + strconv.Itoa(limit), "serve block", "before it was decoded"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q: %s", want, msg)
				}
			}
			m := regexp.MustCompile(`is (\d+) bytes of JSON`).FindStringSubmatch(msg)
			if m == nil {
				t.Fatalf("the error does not say how large the result was: %s", msg)
			}
			quoted, _ := json.Marshal(mcpdemo.BigText(2 * limit))
			if size, _ := strconv.Atoi(m[1]); size < len(quoted) || size > len(quoted)+100 {
				t.Errorf("the error says the result was %d bytes; its text is %d bytes as a JSON string", size, len(quoted))
			}
			again := call(t, cs, "mcp__demo__big", map[string]any{"bytes": 1000})
			if again.IsError || text(again) != mcpdemo.BigText(1000) {
				t.Errorf("the call after the refused one failed: %s", text(again))
			}
			if got := serverCalls(t, calls); !slices.Equal(got, []string{"big", "big", "big"}) {
				t.Errorf("the server received %v, want every call", got)
			}
		})
	}
}
