//go:build unix

package executor_test

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk/launcher"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// envConfig is the environment's config {} for this server, as the host
// would decode it, running the ssh program client with the private key
// file key: the server's host key checked strictly against a
// known_hosts file of its own, and TOOLGATE_SSH_PROBE forwarded as an env
// request (SendEnv), as ssh forwards LANG on many systems.
func (d *sshServer) envConfig(client, key string) map[string]any {
	return map[string]any{
		"executor":                 "ssh",
		"ssh":                      client,
		"host":                     "127.0.0.1",
		"port":                     d.port,
		"user":                     d.user,
		"identity_file":            key,
		"known_hosts_file":         d.knownHosts,
		"strict_host_key_checking": "yes",
		"executor_env":             map[string]string{"TOOLGATE_SSH_PROBE": "sent as an env request"},
		"options":                  []string{"LogLevel=ERROR", "ConnectTimeout=10", "SendEnv=TOOLGATE_SSH_PROBE"},
	}
}

// TestSSHForReal runs mcp-demo through the ssh executor, with the system's
// OpenSSH client, against the test's own SSH server on loopback: list,
// call, env and cwd, a 4 MiB result, and no remote process left after the
// session closes or the plugin dies.
func TestSSHForReal(t *testing.T) {
	client := testbin.Program(t, "ssh", "the OpenSSH client (Debian: openssh-client)")
	d := startSSHServer(t)

	t.Run("session", func(t *testing.T) {
		c := inProcess(t, d.envConfig(client, d.clientKey))
		dir := t.TempDir()
		s := connect(t, c, launcher.Spec{
			Server:  "remote-demo",
			Command: demo(t),
			Env:     baseEnv(map[string]string{"GREETING": "hello over ssh", "TRICKY": tricky}),
			Dir:     dir,
		})
		if got, err := s.text(t.Context(), "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
			t.Errorf("echo = %q, %v", got, err)
		}
		n := 0
		for _, err := range s.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n < 10 {
			t.Errorf("tools/list over ssh returned %d tools", n)
		}
		var env map[string]*string
		s.jsonTool(t, "env", map[string]any{"names": []string{"GREETING", "TRICKY", "SSH_CONNECTION", "TOOLGATE_SSH_PROBE"}}, &env)
		got := map[string]string{"GREETING": deref(env["GREETING"]), "TRICKY": deref(env["TRICKY"]), "cwd": deref(env["cwd"]),
			"TOOLGATE_SSH_PROBE": deref(env["TOOLGATE_SSH_PROBE"])}
		want := map[string]string{"GREETING": "hello over ssh", "TRICKY": tricky, "cwd": dir,
			"TOOLGATE_SSH_PROBE": "sent as an env request"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("env and cwd the remote server sees (-want +got):\n%s", diff)
		}
		if env["SSH_CONNECTION"] == nil {
			t.Errorf("the server did not run in an ssh session (no SSH_CONNECTION)")
		}
		big := strings.Repeat("0123456789abcdef", 4<<20/16)
		if got, err := s.text(t.Context(), "echo_big", map[string]any{"data": big}); err != nil || got != big {
			t.Errorf("echo_big of 4 MiB over ssh = %d bytes, %v", len(got), err)
		}

		remote := s.remotePid(t)
		if remote == s.proc.Pid() {
			t.Fatalf("the remote pid %d is the local ssh client's", remote)
		}
		if err := s.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
		if err := s.proc.Close(); err != nil {
			t.Errorf("closing the process: %v", err)
		}
		if err := procwatch.WaitGone(t.Context(), remote); err != nil {
			t.Errorf("remote server %d still running after the session closed: %v", remote, err)
		}
		if err := s.proc.Wait(t.Context()); err != nil {
			t.Errorf("ssh exit after a clean session = %v, want status 0", err)
		}
	})

	t.Run("plugin killed", func(t *testing.T) {
		b := binary(t, d.envConfig(client, d.clientKey))
		s := connect(t, b.Plugin.(*launcher.Client), launcher.Spec{Server: "remote-demo", Command: demo(t), Env: baseEnv(nil)})
		remote := s.remotePid(t)
		killPlugin(t, b)
		if err := procwatch.WaitGone(t.Context(), remote); err != nil {
			t.Errorf("remote server %d outlived the launcher plugin: %v", remote, err)
		}
	})

	t.Run("remote command missing", func(t *testing.T) {
		c := inProcess(t, d.envConfig(client, d.clientKey))
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "remote-demo", Command: "toolgate-no-such-server"})
		se := startError(t, err)
		if se.Kind != launcher.KindNotFound || !containsAll(se.Message, `command "toolgate-no-such-server" not found on "127.0.0.1" over ssh`) {
			t.Errorf("start error = %v", se)
		}
	})

	t.Run("key refused", func(t *testing.T) {
		c := inProcess(t, d.envConfig(client, d.strangerKey))
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "remote-demo", Command: demo(t)})
		se := startError(t, err)
		if se.Kind != launcher.KindExecutor || !containsAll(se.Message, "exit status 255", "identity_file") ||
			!strings.Contains(se.StderrExcerpt, "Permission denied") {
			t.Errorf("start error = kind %v, message %q, stderr %q; want the executor's refusal", se.Kind, se.Message, se.StderrExcerpt)
		}
	})

	t.Run("nobody listening", func(t *testing.T) {
		cfg := d.envConfig(client, d.clientKey)
		cfg["port"] = freePort(t)
		c := inProcess(t, cfg)
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "remote-demo", Command: demo(t)})
		se := startError(t, err)
		if se.Kind != launcher.KindExecutor || !strings.Contains(se.StderrExcerpt, "Connection refused") {
			t.Errorf("start error = kind %v, message %q, stderr %q; want ssh's connection error", se.Kind, se.Message, se.StderrExcerpt)
		}
	})
}
