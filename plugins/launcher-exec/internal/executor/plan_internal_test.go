package executor

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
)

const testMarker = readyMarkerPrefix + "0123"

// script is the start script the shell-based executors send for spec.
func script(spec launcher.Spec) string {
	return startScript{dir: spec.Dir, env: sortedEntries(spec.Env), command: spec.Command, args: spec.Args, marker: testMarker}.String()
}

// TestPlanArgv pins the exact command line each executor runs, and how
// env and cwd travel.
func TestPlanArgv(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"ssh", "docker", "kubectl", "nomad", "bwrap", "systemd-run", "mcp-files"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pluginEnv := map[string]string{"PATH": bin, "HOME": "/home/op", "SECRET_OF_THE_HOST": "never passed on"}
	lookupEnv := func(k string) (string, bool) { v, ok := pluginEnv[k]; return v, ok }

	spec := launcher.Spec{
		Server:  "files",
		Command: "mcp-files",
		Args:    []string{"--root", "/srv/it's here"},
		Env:     map[string]string{"TOKEN": "a b", "PATH": "/opt/bin:/usr/bin"},
		Dir:     "/srv",
	}
	tests := []struct {
		name   string
		cfg    string
		argv   []string
		env    []string
		dir    string
		marker bool
	}{{
		name: "local",
		cfg:  `{"executor":"local"}`,
		argv: []string{"mcp-files", "--root", "/srv/it's here"},
		env:  []string{"HOME=/home/op", "PATH=/opt/bin:/usr/bin", "TOKEN=a b"},
		dir:  "/srv",
	}, {
		name: "local under bwrap",
		cfg:  `{"executor":"local","sandbox_prefix":["bwrap","--die-with-parent","--ro-bind","/","/","--"]}`,
		argv: []string{"bwrap", "--die-with-parent", "--ro-bind", "/", "/", "--", "mcp-files", "--root", "/srv/it's here"},
		env:  []string{"HOME=/home/op", "PATH=/opt/bin:/usr/bin", "TOKEN=a b"},
		dir:  "/srv",
	}, {
		name: "ssh",
		cfg: `{"executor":"ssh","host":"build-1","user":"deploy","port":2222,"identity_file":"/keys/id_ed25519",
			"known_hosts_file":"/keys/known_hosts","strict_host_key_checking":"yes","options":["ServerAliveInterval=30"],
			"executor_env":{"SSH_AUTH_SOCK":"/run/agent"}}`,
		argv: []string{"ssh", "-T", "-o", "BatchMode=yes", "-p", "2222", "-l", "deploy",
			"-i", "/keys/id_ed25519", "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=/keys/known_hosts",
			"-o", "StrictHostKeyChecking=yes", "-o", "ServerAliveInterval=30", "--", "build-1", script(spec)},
		env:    []string{"HOME=/home/op", "PATH=" + bin, "SSH_AUTH_SOCK=/run/agent"},
		marker: true,
	}, {
		name: "docker",
		cfg:  `{"executor":"docker","container":"mcp-tools","user":"app","executor_env":{"DOCKER_HOST":"unix:///run/docker.sock"}}`,
		// TOKEN's value travels in the CLI's environment; PATH would
		// change the CLI's own, so it goes on the command line.
		argv: []string{"docker", "exec", "-i", "-u", "app", "-w", "/srv", "-e", "PATH=/opt/bin:/usr/bin", "-e", "TOKEN",
			"mcp-tools", "mcp-files", "--root", "/srv/it's here"},
		env: []string{"DOCKER_HOST=unix:///run/docker.sock", "HOME=/home/op", "PATH=" + bin, "TOKEN=a b"},
	}, {
		name: "docker with shell",
		cfg:  `{"executor":"docker","container":"mcp-tools","shell":"/bin/sh"}`,
		argv: []string{"docker", "exec", "-i", "-w", "/srv", "-e", "PATH=/opt/bin:/usr/bin", "-e", "TOKEN",
			"mcp-tools", "/bin/sh", "-c", startScript{command: "mcp-files", marker: testMarker, useArgv: true}.String(),
			"mcp-files", "--root", "/srv/it's here"},
		env:    []string{"HOME=/home/op", "PATH=" + bin, "TOKEN=a b"},
		marker: true,
	}, {
		name:   "kubectl",
		cfg:    `{"executor":"kubectl","pod":"mcp-0","container":"tools","namespace":"ai","context":"prod","executor_env":{"KUBECONFIG":"/kube/config"}}`,
		argv:   []string{"kubectl", "--context", "prod", "-n", "ai", "exec", "-i", "mcp-0", "-c", "tools", "--", "sh", "-c", script(spec)},
		env:    []string{"HOME=/home/op", "KUBECONFIG=/kube/config", "PATH=" + bin},
		marker: true,
	}, {
		name:   "nomad",
		cfg:    `{"executor":"nomad","alloc":"5b9f4c1e","task":"tools","namespace":"ai","shell":"/busybox/sh"}`,
		argv:   []string{"nomad", "alloc", "exec", "-i=true", "-t=false", "-namespace", "ai", "-task", "tools", "5b9f4c1e", "/busybox/sh", "-c", script(spec)},
		env:    []string{"HOME=/home/op", "PATH=" + bin},
		marker: true,
	}, {
		name: "custom with placeholders",
		cfg:  `{"executor":"custom","prefix":["systemd-run","--user","--pipe","--quiet","--working-directory={{dir}}","--setenv={{env}}","{{command}}","{{args}}"]}`,
		argv: []string{"systemd-run", "--user", "--pipe", "--quiet", "--working-directory=/srv",
			"--setenv=PATH=/opt/bin:/usr/bin", "--setenv=TOKEN=a b", "mcp-files", "--root", "/srv/it's here"},
		env: []string{"HOME=/home/op", "PATH=" + bin},
	}, {
		name:   "custom with script",
		cfg:    `{"executor":"custom","prefix":["ssh","-T","jump","{{script}}"]}`,
		argv:   []string{"ssh", "-T", "jump", script(spec)},
		env:    []string{"HOME=/home/op", "PATH=" + bin},
		marker: true,
	}, {
		name: "custom running locally",
		cfg:  `{"executor":"custom","prefix":["bwrap","--"],"runs_locally":true}`,
		argv: []string{"bwrap", "--", "mcp-files", "--root", "/srv/it's here"},
		env:  []string{"HOME=/home/op", "PATH=/opt/bin:/usr/bin", "TOKEN=a b"},
		dir:  "/srv",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := ParseConfig(json.RawMessage(tt.cfg))
			if cfg == nil {
				t.Fatalf("ParseConfig: %v", diags)
			}
			inv, err := cfg.plan(spec, testMarker, lookupEnv)
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				Argv, Env []string
				Dir       string
				Marker    bool
			}{inv.argv, inv.env, inv.dir, inv.marker != ""}
			want := struct {
				Argv, Env []string
				Dir       string
				Marker    bool
			}{tt.argv, tt.env, tt.dir, tt.marker}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if !filepath.IsAbs(inv.program) {
				t.Errorf("program %q is not resolved to a path", inv.program)
			}
			for _, a := range inv.argv {
				switch a {
				case "-t", "-it", "-ti", "--tty", "-tty", "-t=true":
					t.Errorf("argv asks for a TTY with %q: %q", a, inv.argv)
				}
			}
			if strings.Contains(strings.Join(inv.env, "\n"), "SECRET_OF_THE_HOST") {
				t.Errorf("a variable of the plugin's own environment outside inherit_env was passed on: %q", inv.env)
			}
		})
	}
}

// TestShellQuoteSurvivesARealShell feeds quoted strings through sh and
// compares what comes out.
func TestShellQuoteSurvivesARealShell(t *testing.T) {
	values := []string{"", "plain", "it's", `"double" \back\slash`, "$HOME `id` $(id)", "new\nline", "tab\there", "*?[a]~", "'", "''\\''"}
	for _, v := range values {
		out, err := runShell(t, "printf '%s' "+shellQuote(v))
		if err != nil || out != v {
			t.Errorf("sh printed %q, %v for %q", out, err, v)
		}
	}
}

func runShell(t *testing.T, script string) (string, error) {
	t.Helper()
	out, err := exec.Command("sh", "-c", script).Output()
	return string(out), err
}

// TestParseConfig checks what a user sees for each kind of mistake.
func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		path    []string // of the first diagnostic; nil = accepted
		summary string
		detail  string
	}{
		{name: "empty is local", config: `{}`},
		{name: "null attributes are absent", config: `{"executor":"ssh","host":"h","port":null,"user":null,"container":null}`},
		{name: "unknown executor", config: `{"executor":"sssh"}`, path: []string{"executor"}, summary: "Unknown executor", detail: `Did you mean "ssh"?`},
		{name: "ssh without host", config: `{"executor":"ssh"}`, summary: "Missing host", detail: "host = "},
		{name: "ssh host like an option", config: `{"executor":"ssh","host":"-oProxyCommand=x"}`, path: []string{"host"}, summary: "Invalid host"},
		{name: "ssh port out of range", config: `{"executor":"ssh","host":"h","port":70000}`, path: []string{"port"}, summary: "Invalid port"},
		{name: "ssh port fraction", config: `{"executor":"ssh","host":"h","port":22.5}`, path: []string{"port"}, detail: "whole number"},
		{name: "ssh TTY option", config: `{"executor":"ssh","host":"h","options":["ConnectTimeout=5","RequestTTY=yes"]}`, path: []string{"options", "1"}, summary: "TTY requested"},
		{name: "ssh BatchMode off", config: `{"executor":"ssh","host":"h","options":["BatchMode no"]}`, path: []string{"options", "0"}, summary: "BatchMode disabled"},
		{name: "ssh option not an option", config: `{"executor":"ssh","host":"h","options":["-t"]}`, path: []string{"options", "0"}, summary: "Invalid ssh option"},
		{name: "ssh ask", config: `{"executor":"ssh","host":"h","strict_host_key_checking":"ask"}`, path: []string{"strict_host_key_checking"}, detail: "never prompts"},
		{name: "attribute of another executor", config: `{"executor":"docker","container":"c","host":"h"}`, path: []string{"host"}, summary: "Attribute does not apply to this executor", detail: "host is a setting of the ssh executor"},
		{name: "executor_env on local", config: `{"executor":"local","executor_env":{"A":"1"}}`, path: []string{"executor_env"}, summary: "Attribute does not apply to this executor"},
		{name: "unknown attribute", config: `{"executor":"local","hots":"x"}`, path: []string{"hots"}, summary: "Unsupported attribute"},
		{name: "wrong type", config: `{"executor":"local","sandbox_prefix":"bwrap"}`, path: []string{"sandbox_prefix"}, detail: "a list of strings"},
		{name: "docker without container", config: `{"executor":"docker"}`, summary: "Missing container"},
		{name: "docker container like an option", config: `{"executor":"docker","container":"--privileged"}`, path: []string{"container"}, summary: "Value starts with a dash"},
		{name: "kubectl without pod", config: `{"executor":"kubectl"}`, summary: "Missing pod"},
		{name: "nomad without alloc", config: `{"executor":"nomad","alloc":""}`, path: []string{"alloc"}, summary: "Empty alloc"},
		{name: "custom without prefix", config: `{"executor":"custom"}`, path: []string{"prefix"}, summary: "Missing prefix"},
		{name: "custom unknown placeholder", config: `{"executor":"custom","prefix":["x","{{arg}}"]}`, path: []string{"prefix", "1"}, detail: "{{arg}} is not a placeholder"},
		{name: "custom args inside an element", config: `{"executor":"custom","prefix":["x","{{command}}","--args={{args}}"]}`, path: []string{"prefix", "2"}, detail: "whole element"},
		{name: "custom command without args", config: `{"executor":"custom","prefix":["x","{{command}}"]}`, path: []string{"prefix"}, detail: "together"},
		{name: "custom script with command", config: `{"executor":"custom","prefix":["sh","-c","{{script}}","{{command}}","{{args}}"]}`, path: []string{"prefix"}, detail: "{{script}} carries"},
		{name: "custom env with another placeholder", config: `{"executor":"custom","prefix":["x","{{env}}{{dir}}"]}`, path: []string{"prefix", "1"}, detail: "repeated once per variable"},
		{name: "custom placeholder as program", config: `{"executor":"custom","prefix":["{{command}}","{{args}}"]}`, path: []string{"prefix", "0"}, detail: "first element"},
		{name: "bad inherit_env name", config: `{"inherit_env":["PATH","A=B"]}`, path: []string{"inherit_env", "1"}, summary: "Invalid variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := ParseConfig(json.RawMessage(tt.config))
			if tt.summary == "" && tt.detail == "" && tt.path == nil {
				if cfg == nil || len(diags) != 0 {
					t.Fatalf("ParseConfig(%s) refused: %v", tt.config, diags)
				}
				return
			}
			if cfg != nil || !sdk.HasErrors(diags) {
				t.Fatalf("ParseConfig(%s) = %+v, %v; want it refused", tt.config, cfg, diags)
			}
			d := diags[0]
			if !cmp.Equal(d.AttributePath, tt.path) || !strings.Contains(d.Summary, tt.summary) || !strings.Contains(d.Detail, tt.detail) {
				t.Errorf("first diagnostic = %+v; want path %q, summary with %q, detail with %q", d, tt.path, tt.summary, tt.detail)
			}
		})
	}
}
