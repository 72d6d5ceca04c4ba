package rules_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/plugins/guardian/internal/rules"
	"github.com/toolgate/toolgate/plugins/internal/hostlist"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

func ptr[T any](v T) *T { return &v }

var (
	readOnly = &sdk.Annotations{ReadOnly: true}
	writer   = &sdk.Annotations{Destructive: ptr(true), OpenWorld: ptr(false)}
	local    = &sdk.Annotations{Destructive: ptr(false), OpenWorld: ptr(false)}
)

func workspace(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc-link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReview(t *testing.T) {
	ws := workspace(t)
	hosts, err := hostlist.Parse([]string{"api.github.com", "*.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	e := rules.New(rules.Config{
		Workspace: ws, Home: "/home/u", AllowedHosts: &hosts,
		Trust: map[string]rules.Trust{"trusted": rules.TrustHigh, "shady": rules.TrustLow},
	})
	for _, tt := range []struct {
		name, server, tool, args string
		ann                      *sdk.Annotations
		risk                     guardian.RiskLevel
		reason                   string // a phrase the rationale must contain
	}{
		{"read-only call", "files", "read_file", `{"path":"src/main.go"}`, readOnly, guardian.RiskLow, "only reads"},
		{"write inside the workspace", "files", "write_file", `{"path":"src/main.go","content":"x"}`, writer, guardian.RiskMedium, "may destroy data"},
		{"write outside the workspace", "files", "write_file", `{"path":"/etc/hosts","content":"x"}`, writer, guardian.RiskHigh, "outside the workspace"},
		{"write through a symlink out", "files", "write_file", `{"path":"etc-link/hosts"}`, writer, guardian.RiskHigh, "outside the workspace"},
		{"relative escape", "files", "write_file", `{"path":"../../x"}`, writer, guardian.RiskHigh, "outside the workspace"},
		{"read outside the workspace", "files", "read_file", `{"path":"/usr/share/dict/words"}`, readOnly, guardian.RiskMedium, "reads /usr/share/dict/words"},
		{"read a private key", "files", "read_file", `{"path":"~/.ssh/id_ed25519"}`, readOnly, guardian.RiskHigh, "credentials directory"},
		{"no annotations", "x", "do", `{}`, nil, guardian.RiskMedium, "no annotations"},
		{"destructive verb in the name", "files", "delete_file", `{"path":"a.txt"}`, local, guardian.RiskHigh, `"delete"`},
		{"camelCase force push", "git", "forcePushBranch", `{}`, local, guardian.RiskHigh, "force push"},
		{"rm -rf in a command", "shell", "run", `{"command":"rm -rf build"}`, local, guardian.RiskHigh, "rm -r/-f"},
		{"DROP TABLE", "db", "query", `{"sql":"drop table users"}`, local, guardian.RiskHigh, "DROP"},
		{"git push --force", "shell", "run", `{"command":"git push origin main --force"}`, local, guardian.RiskHigh, "git push --force"},
		{"path in a command line", "shell", "run", `{"command":"cp notes.txt /etc/motd"}`, local, guardian.RiskHigh, "outside the workspace"},
		{"AWS key in a body", "web", "post", `{"url":"https://api.github.com/x","body":"key=AKIAIOSFODNN7EXAMPLE"}`, local, guardian.RiskCritical, "AWS access key"},
		{"private key block", "mail", "send", `{"text":"-----BEGIN OPENSSH PRIVATE KEY-----\nabc"}`, local, guardian.RiskCritical, "private key"},
		{"GitHub token", "web", "post", `{"header":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}`, local, guardian.RiskCritical, "GitHub token"},
		{"secret-named key", "svc", "login", `{"password":"hunter2"}`, local, guardian.RiskHigh, `"password" carries a credential`},
		{"allowed host", "web", "fetch", `{"url":"https://api.github.com/repos"}`, readOnly, guardian.RiskLow, "allowed host"},
		{"wildcard allowed host", "web", "fetch", `{"url":"https://docs.example.com/"}`, readOnly, guardian.RiskLow, "allowed host"},
		{"host not allowed", "web", "fetch", `{"url":"https://evil.test/upload"}`, readOnly, guardian.RiskHigh, "evil.test, which is not in allowed_hosts"},
		{"bare host under a host key", "net", "ping", `{"host":"evil.test"}`, readOnly, guardian.RiskHigh, "not in allowed_hosts"},
		{"trusted server lowers", "trusted", "delete_file", `{"path":"a"}`, local, guardian.RiskMedium, "is trusted"},
		{"low-trust server raises", "shady", "write_file", `{"path":"a"}`, writer, guardian.RiskHigh, "low trust"},
		{"low-trust read", "shady", "read_file", `{"path":"a"}`, readOnly, guardian.RiskMedium, "low trust"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := e.Review(t.Context(), guardian.Action{Server: tt.server, Tool: tt.tool, Arguments: json.RawMessage(tt.args), Annotations: tt.ann})
			if err != nil {
				t.Fatal(err)
			}
			if v.RiskLevel != tt.risk {
				t.Errorf("risk = %v, want %v (rationale %q)", v.RiskLevel, tt.risk, v.Rationale)
			}
			wantOutcome := guardian.OutcomeAllow
			if tt.risk >= guardian.RiskHigh {
				wantOutcome = guardian.OutcomeDeny
			}
			if v.Outcome != wantOutcome {
				t.Errorf("outcome = %v, want %v", v.Outcome, wantOutcome)
			}
			if !strings.Contains(v.Rationale, tt.reason) {
				t.Errorf("rationale %q lacks %q", v.Rationale, tt.reason)
			}
			if v.UserAuthorization != guardian.AuthorizationUnknown {
				t.Errorf("user authorization = %v, want unknown", v.UserAuthorization)
			}
		})
	}
}

func TestRationaleNeverQuotesCredentials(t *testing.T) {
	e := rules.New(rules.Config{})
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	v, _ := e.Review(t.Context(), guardian.Action{Server: "s", Tool: "post", Arguments: json.RawMessage(`{"token":"` + secret + `","note":"` + secret + `"}`)})
	if strings.Contains(v.Rationale, secret) || strings.Contains(v.Rationale, "ghp_") {
		t.Errorf("rationale quotes the credential: %q", v.Rationale)
	}
	if v.RiskLevel != guardian.RiskCritical || v.Outcome != guardian.OutcomeDeny {
		t.Errorf("verdict = %+v, want critical deny", v)
	}
}

func TestThreshold(t *testing.T) {
	for _, tt := range []struct {
		threshold guardian.RiskLevel
		want      guardian.Outcome
	}{
		{guardian.RiskMedium, guardian.OutcomeDeny},
		{guardian.RiskHigh, guardian.OutcomeAllow},
		{guardian.RiskCritical, guardian.OutcomeAllow},
	} {
		e := rules.New(rules.Config{Threshold: tt.threshold})
		v, _ := e.Review(t.Context(), guardian.Action{Server: "s", Tool: "write", Arguments: json.RawMessage(`{}`), Annotations: writer})
		if v.Outcome != tt.want {
			t.Errorf("threshold %v, medium-risk call: outcome %v, want %v", tt.threshold, v.Outcome, tt.want)
		}
	}
}

func TestNoWorkspaceSkipsPathChecks(t *testing.T) {
	e := rules.New(rules.Config{})
	v, _ := e.Review(t.Context(), guardian.Action{Server: "s", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/etc/hosts"}`), Annotations: writer})
	if v.RiskLevel != guardian.RiskMedium {
		t.Errorf("risk = %v (%s), want medium without a workspace", v.RiskLevel, v.Rationale)
	}
}

func TestFileContentsAreNotPaths(t *testing.T) {
	e := rules.New(rules.Config{Workspace: workspace(t)})
	v, _ := e.Review(t.Context(), guardian.Action{Server: "files", Tool: "write_file", Annotations: writer,
		Arguments: json.RawMessage(`{"path":"main.js","content":"/* MIT licence */\nconsole.log(1)"}`)})
	if v.RiskLevel != guardian.RiskMedium {
		t.Errorf("risk = %v (%s); a file's contents are not a path", v.RiskLevel, v.Rationale)
	}
}
