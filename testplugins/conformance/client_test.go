package conformance

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// sep1034Schema is the form the suite's elicitation-defaults scenario
// sends, as go-sdk decodes it on the client.
func sep1034Schema(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	err := json.Unmarshal([]byte(`{
		"type": "object",
		"properties": {
			"name":     {"type": "string", "default": "John Doe"},
			"age":      {"type": "integer", "default": 30},
			"score":    {"type": "number", "default": 95.5},
			"status":   {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
			"verified": {"type": "boolean", "default": true},
			"nickname": {"type": "string"}
		},
		"required": []
	}`), &m)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAcceptWithDefaults(t *testing.T) {
	answer := acceptWithDefaults(hclog.NewNullLogger())
	tests := []struct {
		name   string
		params *mcp.ElicitParams
		want   *mcp.ElicitResult
	}{
		{
			name:   "form: accept with every default",
			params: &mcp.ElicitParams{Message: "please accept", RequestedSchema: sep1034Schema(t)},
			want: &mcp.ElicitResult{Action: "accept", Content: map[string]any{
				"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true,
			}},
		},
		{
			name:   "form without a schema: accept with nothing",
			params: &mcp.ElicitParams{Message: "ok?"},
			want:   &mcp.ElicitResult{Action: "accept", Content: map[string]any{}},
		},
		{
			name:   "url: nobody can open it, decline",
			params: &mcp.ElicitParams{Mode: "url", Message: "log in", URL: "https://example.invalid/login", ElicitationID: "e1"},
			want:   &mcp.ElicitResult{Action: "decline"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := answer(t.Context(), &mcp.ElicitRequest{Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMainUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantText string
	}{
		{"no URL", nil, map[string]string{ScenarioEnv: "initialize"}, "missing the server URL"},
		{"URL is not http", []string{"localhost:1234"}, map[string]string{ScenarioEnv: "initialize"}, "is not an http(s) URL"},
		{"no scenario", []string{"http://127.0.0.1:1/mcp"}, nil, ScenarioEnv + " is not set"},
		{"unknown scenario", []string{"http://127.0.0.1:1/mcp"}, map[string]string{ScenarioEnv: "auth/nope"}, `unknown scenario "auth/nope": this client implements auth/2025-03-26-oauth-endpoint-fallback, auth/2025-03-26-oauth-metadata-backcompat, auth/basic-cimd`},
		{"context is not JSON", []string{"http://127.0.0.1:1/mcp"}, map[string]string{ScenarioEnv: "initialize", ContextEnv: "{secret"}, ContextEnv + " is not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr testbin.Buffer
			code := Main(t.Context(), Process{Args: tc.args, Getenv: mapEnv(tc.env), Stderr: &stderr})
			if code != ExitUsage {
				t.Errorf("exit status = %d, want %d (usage)", code, ExitUsage)
			}
			if !strings.Contains(stderr.String(), tc.wantText) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.wantText)
			}
			if strings.Contains(stderr.String(), "secret") {
				t.Errorf("stderr quotes the scenario context: %q", stderr.String())
			}
		})
	}
}

// TestMainExitsByItsDeadline: a server that never answers must not keep
// the client alive; the runner only kills the shell wrapper.
func TestMainExitsByItsDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does net/http watch the
		// connection and cancel r.Context() when the client hangs up.
		var msg struct{ ID json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&msg)
		_, _ = io.Copy(io.Discard, r.Body)
		if msg.ID == nil {
			// A notification (the cancellation go-sdk sends after the
			// deadline): accept it, so only requests hang.
			w.WriteHeader(http.StatusAccepted)
			return
		}
		<-r.Context().Done()
	}))
	defer srv.Close()

	var stderr testbin.Buffer
	code := Main(t.Context(), Process{
		Args:   []string{"-deadline", "300ms", srv.URL + "/mcp"},
		Getenv: mapEnv(map[string]string{ScenarioEnv: "initialize"}),
		Stderr: &stderr,
	})
	if code != ExitFailure {
		t.Errorf("exit status = %d, want %d (failure)", code, ExitFailure)
	}
	if want := `conformance-client: scenario "initialize" failed:`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to contain %q", stderr.String(), want)
	}
	if want := "deadline exceeded"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to say %q", stderr.String(), want)
	}
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
