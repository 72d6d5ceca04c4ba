package conformance

import (
	"github.com/toolgate/toolgate/internal/testbin"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/procwatch"
)

// scenarioTimeout bounds one runner invocation: node start-up, the
// scenario server, and the client wrapped in `timeout 20`.
const scenarioTimeout = 90 * time.Second

// check is one entry of the runner's checks.json.
type check struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// TestConformanceClientScenarios runs the official conformance suite's
// client scenarios against conformance-client, which drives host/mcpclient.
// The runner's exit code alone is not trusted: a client that does nothing
// "passes" a scenario that reports no checks, so every scenario pins the
// check ids that must be SUCCESS (ids read from the suite's source,
// @modelcontextprotocol/conformance 0.1.16).
func TestConformanceClientScenarios(t *testing.T) {
	suite := referees(t)
	client := clientBinary(t)

	// The authorization code flow every login scenario must complete.
	login := []string{
		"authorization-server-metadata", "authorization-request",
		"pkce-code-challenge-sent", "pkce-s256-method-used",
		"token-request", "pkce-code-verifier-sent", "pkce-verifier-matches-challenge",
	}
	// with dynamic client registration, protected-resource metadata and
	// a token the server accepted.
	dcr := append([]string{"prm-pathbased-requested", "client-registration", "valid-bearer-token"}, login...)
	resourceParam := []string{"token-endpoint-auth-method", "resource-parameter-in-authorization",
		"resource-parameter-in-token", "resource-parameter-valid-uri", "resource-parameter-consistency"}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }

	tests := []struct {
		scenario string
		want     []string // check ids that must be SUCCESS
	}{
		{"initialize", []string{"mcp-client-initialization"}},
		{"tools_call", []string{"tool-add-numbers"}},
		{"elicitation-sep1034-client-defaults", []string{
			"client-elicitation-sep1034-string-default",
			"client-elicitation-sep1034-integer-default",
			"client-elicitation-sep1034-number-default",
			"client-elicitation-sep1034-enum-default",
			"client-elicitation-sep1034-boolean-default",
		}},
		{"sse-retry", []string{
			"client-sse-graceful-reconnect",
			"client-sse-retry-timing",
			"client-sse-last-event-id",
		}},
		{"auth/metadata-default", dcr},
		{"auth/metadata-var1", dcr},
		{"auth/metadata-var2", dcr},
		{"auth/metadata-var3", dcr},
		{"auth/basic-cimd", with(login, "prm-pathbased-requested", "cimd-client-id-used", "valid-bearer-token")},
		{"auth/scope-from-www-authenticate", with(dcr, "scope-from-www-authenticate")},
		{"auth/scope-from-scopes-supported", with(dcr, "scope-from-scopes-supported")},
		{"auth/scope-omitted-when-undefined", with(dcr, "scope-omitted-when-undefined")},
		{"auth/scope-step-up", with(dcr, "scope-step-up-initial", "scope-step-up-escalation")},
		// The server refuses every token: the client must stop, not loop.
		{"auth/scope-retry-limit", with(login, "prm-pathbased-requested", "client-registration", "scope-retry-limit")},
		{"auth/token-endpoint-auth-basic", with(dcr, resourceParam...)},
		{"auth/token-endpoint-auth-post", with(dcr, resourceParam...)},
		{"auth/token-endpoint-auth-none", with(dcr, resourceParam...)},
		{"auth/pre-registration", with(login, "prm-pathbased-requested", "pre-registration-auth", "valid-bearer-token")},
		{"auth/2025-03-26-oauth-metadata-backcompat", with(login, "client-registration", "valid-bearer-token")},
		{"auth/2025-03-26-oauth-endpoint-fallback", []string{"client-registration", "authorization-request", "token-request", "valid-bearer-token"}},
		// The client must refuse before any authorization request.
		{"auth/resource-mismatch", []string{"prm-pathbased-requested", "resource-mismatch-rejected"}},
		// sep-2207-client-metadata-grant-types is INFO, by the suite's
		// design, for a client that registers with a metadata document.
		{"auth/offline-access-scope", with(login, "prm-pathbased-requested", "sep-2207-offline-access-requested", "valid-bearer-token")},
		{"auth/offline-access-not-supported", with(dcr, "sep-2207-offline-access-not-requested")},
		{"auth/client-credentials-basic", []string{"prm-pathbased-requested", "authorization-server-metadata", "token-request", "client-credentials-basic-auth", "valid-bearer-token"}},
		{"auth/client-credentials-jwt", []string{"prm-pathbased-requested", "authorization-server-metadata", "token-request", "client-credentials-jwt-verified", "valid-bearer-token"}},
		{"auth/cross-app-access-complete-flow", []string{"prm-pathbased-requested", "authorization-server-metadata", "complete-flow-token-exchange", "token-request", "complete-flow-jwt-bearer", "valid-bearer-token"}},
	}
	if got, want := len(tests), 26; got != want {
		t.Fatalf("the table covers %d scenarios; @modelcontextprotocol/conformance 0.1.16 has %d client scenarios", got, want)
	}
	for _, tc := range tests {
		if _, ok := scenarioTable()[tc.scenario]; !ok {
			t.Fatalf("scenario %s is pinned but the client does not implement it", tc.scenario)
		}
	}

	start := time.Now()
	// Every scenario server listens on its own ephemeral port, so the
	// scenarios run in parallel as the suite's own --suite mode does.
	t.Run("scenario", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.scenario, func(t *testing.T) {
				t.Parallel()
				run := runScenario(t, suite, client, tc.scenario)
				defer func() {
					if t.Failed() {
						t.Logf("runner output:\n%s", run.output)
						t.Logf("client stderr:\n%s", run.clientStderr)
					}
				}()

				if len(run.checks) == 0 {
					t.Fatalf("scenario %s reported no checks (runner: %v); a silent client must not pass", tc.scenario, run.err)
				}
				got := map[string]string{}
				want := map[string]string{}
				for _, id := range tc.want {
					want[id] = "SUCCESS"
					got[id] = "(missing)"
				}
				for _, c := range run.checks {
					if _, pinned := want[c.ID]; pinned && (got[c.ID] == "(missing)" || got[c.ID] == "SUCCESS") {
						// Keep the worst status of a repeated id.
						got[c.ID] = c.Status
					}
					if c.Status == "FAILURE" || c.Status == "WARNING" {
						t.Errorf("check %s: %s: %s %s", c.ID, c.Status, c.ErrorMessage, compactJSON(c.Details))
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("pinned checks of %s (-want +got):\n%s", tc.scenario, diff)
				}
				if run.err != nil {
					t.Errorf("conformance runner for %s: %v", tc.scenario, run.err)
				}
				if !t.Failed() {
					t.Logf("%s: passed, %d checks (%s all SUCCESS), in %s",
						tc.scenario, len(run.checks), strings.Join(tc.want, ", "), run.elapsed.Round(time.Millisecond))
				}
			})
		}
	})
	t.Logf("ran %d conformance client scenarios in %s", len(tests), time.Since(start).Round(time.Millisecond))
}

// clientBinary returns the conformance client, built by `make build` or
// on demand.
func clientBinary(t *testing.T) string {
	t.Helper()
	path := testbin.Path(t, "conformance-client")
	if strings.ContainsAny(path, " \t") {
		t.Fatalf("conformance-client path %q contains a space, and the runner splits --command on spaces: set TOOLGATE_BIN or TMPDIR to a path without spaces", path)
	}
	return path
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// referees returns the interop directory with the pinned suite (see
// testbin.Interop: skipped loudly under a bare go test, a failure under
// make test).
func referees(t *testing.T) string {
	t.Helper()
	dir := testbin.Interop(t)
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("npx is required to run the conformance suite (install Node.js and npm): %v", err)
	}
	if !fileExists(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "package.json")) {
		t.Fatalf("the conformance suite is not installed in %s: run `make interop`", dir)
	}
	return dir
}

// scenarioRun is what one runner invocation left behind.
type scenarioRun struct {
	checks       []check
	output       []byte // the runner's stdout and stderr
	clientStderr string
	err          error // the runner's own failure (non-zero exit, timeout)
	elapsed      time.Duration
}

// runScenario runs `npx conformance client` for one scenario from the
// interop directory, with its node_modules/.bin (Node 22) first on PATH,
// and collects every checks.json it wrote.
func runScenario(t *testing.T, suite, client, scenario string) scenarioRun {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), scenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npx", "--no", "conformance", "client",
		"--command", "timeout 20 "+client,
		"--scenario", scenario,
		"-o", out)
	cmd.Dir = suite
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(suite, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NO_COLOR=1",
		LogLevelEnv+"=debug",
	)
	// The runner starts a shell, timeout and the client: end them all.
	procwatch.OwnGroup(cmd)
	cmd.Cancel = func() error { return procwatch.KillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output

	start := time.Now()
	err := cmd.Run()
	run := scenarioRun{output: output.Bytes(), err: err, elapsed: time.Since(start)}
	if ctx.Err() != nil {
		run.err = errors.Join(err, ctx.Err())
	}

	walkErr := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch d.Name() {
		case "checks.json":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var cs []check
			if err := json.Unmarshal(b, &cs); err != nil {
				return err
			}
			run.checks = append(run.checks, cs...)
		case "stderr.txt":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			run.clientStderr += string(b)
		}
		return nil
	})
	if walkErr != nil {
		t.Fatalf("reading results of %s: %v\nrunner output:\n%s", scenario, walkErr, run.output)
	}
	return run
}
