package executor_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// sshd is a throwaway OpenSSH server on loopback, running as the current
// user, that accepts one generated client key.
type sshd struct {
	port        int
	user        string
	clientKey   string // private key in authorized_keys
	strangerKey string // private key the server does not know
	knownHosts  string // an empty UserKnownHostsFile for the client
}

// startSSHD installs OpenSSH's server if it is missing (apt-get, when
// running as root on Debian), then starts one as described on sshd. It
// skips the test, loudly, only when sshd cannot be installed or started.
func startSSHD(t *testing.T) *sshd {
	t.Helper()
	daemon := findSSHD(t)
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED LOUDLY: the ssh executor test needs %s (package openssh-client): %v", tool, err)
		}
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keygen := func(name string) string {
		path := filepath.Join(dir, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		return path
	}
	hostKey, clientKey, stranger := keygen("host_key"), keygen("client_key"), keygen("stranger_key")
	pub, err := os.ReadFile(clientKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	knownHosts := filepath.Join(dir, "known_hosts")
	for path, data := range map[string][]byte{authorized: pub, knownHosts: nil} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	config := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
AllowUsers %s
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PermitUserEnvironment no
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
LogLevel VERBOSE
`, port, hostKey, filepath.Join(dir, "sshd.pid"), authorized, me.Username)), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// sshd run by root insists on its privilege separation directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Skipf("SKIPPED LOUDLY: cannot create /run/sshd for sshd: %v", err)
		}
	}

	cmd := exec.Command(daemon, "-D", "-e", "-f", config)
	procwatch.DieWithTest(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("SKIPPED LOUDLY: cannot start %s: %v", daemon, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// sshd says so once it accepts connections; -e keeps its log on stderr.
	if _, err := procwatch.WaitLine(ctx, stderr, regexp.MustCompile(`Server listening on 127\.0\.0\.1 port \d+`)); err != nil {
		t.Skipf("SKIPPED LOUDLY: %s did not start listening on port %d: %v", daemon, port, err)
	}
	return &sshd{port: port, user: me.Username, clientKey: clientKey, strangerKey: stranger, knownHosts: knownHosts}
}

// findSSHD returns the sshd program, installing openssh-server when
// missing and possible.
func findSSHD(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the ssh executor test needs sshd (package openssh-server), and only root can install it here; install it and rerun")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("SKIPPED LOUDLY: the ssh executor test needs sshd (package openssh-server) and there is no apt-get to install it; install it and rerun")
	}
	install := func() ([]byte, error) {
		cmd := exec.Command("apt-get", "install", "-y", "--no-install-recommends", "openssh-server")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	out, err := install()
	if err != nil { // the package lists may be missing or stale
		if upd, uerr := exec.Command("apt-get", "update").CombinedOutput(); uerr != nil {
			t.Skipf("SKIPPED LOUDLY: cannot install openssh-server for the ssh executor test: apt-get update: %v\n%s", uerr, upd)
		}
		out, err = install()
	}
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: cannot install openssh-server for the ssh executor test: %v\n%s", err, out)
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skipf("SKIPPED LOUDLY: openssh-server installed but /usr/sbin/sshd is missing: %v", err)
	}
	return "/usr/sbin/sshd"
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// config is the environment's config {} for this server, as the host
// would decode it.
func (d *sshd) config(key string) map[string]any {
	return map[string]any{
		"executor":                 "ssh",
		"host":                     "127.0.0.1",
		"port":                     d.port,
		"user":                     d.user,
		"identity_file":            key,
		"known_hosts_file":         d.knownHosts,
		"strict_host_key_checking": "no",
		"options":                  []string{"LogLevel=ERROR", "ConnectTimeout=10"},
	}
}

// TestSSHForReal runs mcp-demo through the ssh executor against a real
// sshd on loopback: list, call, env and cwd, a 4 MiB result, and no remote
// process left after the session closes or the plugin dies.
func TestSSHForReal(t *testing.T) {
	d := startSSHD(t)

	t.Run("session", func(t *testing.T) {
		c := inProcess(t, d.config(d.clientKey))
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
		s.jsonTool(t, "env", map[string]any{"names": []string{"GREETING", "TRICKY", "SSH_CONNECTION"}}, &env)
		got := map[string]string{"GREETING": deref(env["GREETING"]), "TRICKY": deref(env["TRICKY"]), "cwd": deref(env["cwd"])}
		want := map[string]string{"GREETING": "hello over ssh", "TRICKY": tricky, "cwd": dir}
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
		b := binary(t, d.config(d.clientKey))
		s := connect(t, b.Plugin.(*launcher.Client), launcher.Spec{Server: "remote-demo", Command: demo(t), Env: baseEnv(nil)})
		remote := s.remotePid(t)
		killPlugin(t, b)
		if err := procwatch.WaitGone(t.Context(), remote); err != nil {
			t.Errorf("remote server %d outlived the launcher plugin: %v", remote, err)
		}
	})

	t.Run("remote command missing", func(t *testing.T) {
		c := inProcess(t, d.config(d.clientKey))
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "remote-demo", Command: "toolgate-no-such-server"})
		se := startError(t, err)
		if se.Kind != launcher.KindNotFound || !containsAll(se.Message, `command "toolgate-no-such-server" not found on "127.0.0.1" over ssh`) {
			t.Errorf("start error = %v", se)
		}
	})

	t.Run("key refused", func(t *testing.T) {
		c := inProcess(t, d.config(d.strangerKey))
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "remote-demo", Command: demo(t)})
		se := startError(t, err)
		if se.Kind != launcher.KindExecutor || !containsAll(se.Message, "exit status 255", "identity_file") ||
			!strings.Contains(se.StderrExcerpt, "Permission denied") {
			t.Errorf("start error = kind %v, message %q, stderr %q; want the executor's refusal", se.Kind, se.Message, se.StderrExcerpt)
		}
	})

	t.Run("nobody listening", func(t *testing.T) {
		cfg := d.config(d.clientKey)
		cfg["port"] = freePort(t)
		c := inProcess(t, cfg)
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "remote-demo", Command: demo(t)})
		se := startError(t, err)
		if se.Kind != launcher.KindExecutor || !strings.Contains(se.StderrExcerpt, "Connection refused") {
			t.Errorf("start error = kind %v, message %q, stderr %q; want ssh's connection error", se.Kind, se.Message, se.StderrExcerpt)
		}
	})
}
