package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

func TestServeAuthAndLimitsLoad(t *testing.T) {
	t.Parallel()
	cfg, diags, _ := loadString(t, `serve {
  listen = "0.0.0.0:8931"
  auth {
    issuer   = "https://login.example.com/realms/team"
    resource = "https://toolgate.example.com/mcp"
    scopes   = ["mcp"]
    claims   = ["department"]
    leeway   = 10
  }
  limit {
    calls = 30
  }
  limit {
    callers = ["ci-*"]
    tools   = ["mcp__github__*"]
    per     = ["caller", "tool"]
    calls   = 5
    period  = 10
    burst   = 2
  }
}
`, nil)
	if diags.HasErrors() || len(diags) > 0 {
		t.Fatalf("diagnostics: %s", describe(diags))
	}
	want := Serve{
		Listen: "0.0.0.0:8931", MaxResultBytes: DefaultMaxResultBytes, MaxSessions: DefaultMaxSessions, InitialListWait: DefaultInitialListWait, Ops: ServeOps{DrainGrace: DefaultDrainGrace},
		Auth: &Auth{
			Issuer: "https://login.example.com/realms/team", Resource: "https://toolgate.example.com/mcp",
			Audiences: []string{"https://toolgate.example.com/mcp"}, Scopes: []string{"mcp"},
			GroupsClaim: "groups", Claims: []string{"department"}, Leeway: 10 * time.Second,
		},
		Limits: []Limit{
			{PerCaller: true, Calls: 30, Period: time.Minute, Burst: 30},
			{Callers: []string{"ci-*"}, Tools: []string{"mcp__github__*"}, PerCaller: true, PerTool: true, Calls: 5, Period: 10 * time.Second, Burst: 2},
		},
	}
	if d := cmp.Diff(want, cfg.Serve, cmpopts.IgnoreTypes(hcl.Range{})); d != "" {
		t.Errorf("serve (-want +got):\n%s", d)
	}
}

func TestServeAuthDiagnostics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		src  string
		want []wantDiag
	}{
		{
			name: "static token and auth",
			src: `serve {
  token_env_var = "TOKEN"
  auth {
    issuer   = "https://login.example.com"
    resource = "https://toolgate.example.com/mcp"
  }
}`,
			want: []wantDiag{{summary: "Both token_env_var and auth", detail: "Remove one of them", line: 2}},
		},
		{
			name: "bad issuer URL",
			src: `serve {
  auth {
    issuer   = "login.example.com"
    resource = "https://toolgate.example.com/mcp"
  }
}`,
			want: []wantDiag{{summary: "Invalid URL", detail: "issuer must be an absolute https:// URL", line: 3}},
		},
		{
			name: "plain http issuer beyond localhost",
			src: `serve {
  auth {
    issuer   = "http://login.example.com"
    resource = "https://toolgate.example.com/mcp"
  }
}`,
			want: []wantDiag{{summary: "Insecure URL", line: 3}},
		},
		{
			name: "missing issuer and resource",
			src: `serve {
  auth {
  }
}`,
			want: []wantDiag{{summary: "Missing issuer", line: 2}, {summary: "Missing resource", line: 2}},
		},
		{
			name: "persistent approval with auth",
			src: `serve {
  allow_persistent_approval = true
  auth {
    issuer   = "https://login.example.com"
    resource = "https://toolgate.example.com/mcp"
  }
}`,
			want: []wantDiag{{summary: "Persistent approval with auth", detail: "their own session", line: 2}},
		},
		{
			name: "limit without calls, bad per, bad glob",
			src: `serve {
  limit {
    per   = ["user"]
    tools = ["[a-"]
  }
}`,
			want: []wantDiag{
				{summary: "Missing calls", line: 2},
				{summary: "Invalid per", detail: `"user"`, line: 3},
				{summary: "Invalid glob", line: 4},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, diags, _ := loadString(t, tc.src, nil)
			checkDiags(t, diags, tc.want)
		})
	}
}
