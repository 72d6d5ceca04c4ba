package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/testbin"
)

// TestInspectorSeesResourcesAndPromptsAsDirect: the Inspector CLI lists
// and reads resources and lists and gets prompts of server-everything
// through toolgate serve (stdio and HTTP, prefix = false) and gets what
// it gets from the server directly, field by field.
func TestInspectorSeesResourcesAndPromptsAsDirect(t *testing.T) {
	interop := testbin.Interop(t)
	node := testbin.Node(t)
	cli := filepath.Join(interop, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	everything := testbin.EverythingServer(t, "stdio")
	argv, _ := json.Marshal(everything[1:])
	// The Inspector CLI lists once: its first request waits for the
	// server to start (generousListWait).
	cfg := writeConfig(t, generousListWait, fmt.Sprintf("server \"everything\" {\n  command = %q\n  args = %s\n  prefix = false\n}\n", everything[0], argv))

	inspect := func(t *testing.T, target []string, args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		// What follows -- is appended to the target (see the tools test).
		full := append(append([]string{cli, target[0]}, args...), "--")
		cmd := exec.CommandContext(ctx, node, append(full, target[1:]...)...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out, ee.Stderr)
			}
			t.Fatalf("inspector %v: %v", args, err)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector output %q: %v", out, err)
		}
		return v
	}
	calls := [][]string{
		{"--method", "resources/list"},
		{"--method", "resources/templates/list"},
		{"--method", "prompts/list"},
		{"--method", "prompts/get", "--prompt-name", "simple-prompt"},
		{"--method", "prompts/get", "--prompt-name", "args-prompt", "--prompt-args", "city=Paris", "state=TX"},
		{"--method", "prompts/get", "--prompt-name", "resource-prompt", "--prompt-args", "resourceType=Text", "resourceId=1"},
	}
	directList := inspect(t, everything, "--method", "resources/list")
	resources, _ := directList["resources"].([]any)
	if len(resources) == 0 {
		t.Fatalf("server-everything lists no resources: %v", directList)
	}
	uri, _ := resources[0].(map[string]any)["uri"].(string)
	calls = append(calls, []string{"--method", "resources/read", "--uri", uri})
	want := make([]map[string]any, len(calls))
	for i, c := range calls {
		want[i] = inspect(t, everything, c...)
	}
	check := func(t *testing.T, target []string) {
		for i, c := range calls {
			if diff := cmp.Diff(normalize(want[i]), normalize(inspect(t, target, c...))); diff != "" {
				t.Errorf("%v through toolgate differs from direct (-direct +toolgate):\n%s", c, diff)
			}
		}
	}
	t.Run("stdio", func(t *testing.T) {
		check(t, []string{testbin.Path(t, "toolgate"), "serve", "--config", cfg})
	})
	t.Run("http", func(t *testing.T) {
		p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
		check(t, []string{p.url(t)})
	})
}

// clock matches the time server-everything writes into dynamic resources.
var clock = regexp.MustCompile(`\d{1,2}:\d{2}:\d{2} [AP]M`)

// normalize removes the differences that are not toolgate's to keep:
//   - list order (toolgate merges servers and serves each list sorted);
//   - "required": false, which go-sdk omits (absent means false);
//   - cacheScope "public" and ttlMs 0, which go-sdk's server writes on
//     results that carry none (absent means the same);
//   - the clock time in dynamic resources, read at different moments.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "required" && e == false,
				k == "cacheScope" && e == "public",
				k == "ttlMs" && e == float64(0):
				continue
			}
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		sort.SliceStable(out, func(i, j int) bool { return sortKey(out[i]) < sortKey(out[j]) })
		return out
	case string:
		return clock.ReplaceAllString(x, "HH:MM:SS")
	}
	return v
}

func sortKey(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range []string{"uri", "uriTemplate", "name"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}
