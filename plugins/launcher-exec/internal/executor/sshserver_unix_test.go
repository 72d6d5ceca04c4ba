//go:build unix

package executor_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshServer is an SSH server on loopback written for the tests with
// golang.org/x/crypto/ssh, so the ssh executor meets the real OpenSSH
// client without an sshd installed or anything on the machine changed.
// It accepts one generated client key, and for each session:
//   - applies "env" requests (what the client's SendEnv forwards);
//   - runs the "exec" request's command with /bin/sh -c, as sshd runs it
//     with the login shell, in a process group of its own;
//   - streams the channel to the command's stdin (EOF closes it) and its
//     stdout and stderr back, then reports its exit status;
//   - kills the process group when the channel closes first (the client
//     hung up or died): a remote server never outlives its session.
type sshServer struct {
	port        int
	user        string
	clientKey   string // private key file the server accepts
	strangerKey string // private key file the server does not know
	knownHosts  string // UserKnownHostsFile holding the server's host key

	config   *ssh.ServerConfig
	listener net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

// startSSHServer starts an sshServer that stops when the test ends.
func startSSHServer(t *testing.T) *sshServer {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	clientPub, clientKey := writeKey(t, dir, "client_key")
	_, strangerKey := writeKey(t, dir, "stranger_key")
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	s := &sshServer{user: me.Username, clientKey: clientKey, strangerKey: strangerKey, conns: map[net.Conn]bool{}}
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if meta.User() != s.user || !bytes.Equal(key.Marshal(), clientPub.Marshal()) {
				return nil, fmt.Errorf("key refused for %q", meta.User())
			}
			return nil, nil
		},
	}
	s.config.AddHostKey(hostKey)

	s.listener, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = s.listener.Addr().(*net.TCPAddr).Port
	s.knownHosts = filepath.Join(dir, "known_hosts")
	line := fmt.Sprintf("[127.0.0.1]:%d %s", s.port, ssh.MarshalAuthorizedKey(hostKey.PublicKey()))
	if err := os.WriteFile(s.knownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// writeKey writes a new ed25519 private key in OpenSSH's format, readable
// only by its owner as ssh demands, and returns its public half and path.
func writeKey(t *testing.T, dir, name string) (ssh.PublicKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshPub, path
}

// close stops accepting, hangs up on every client (which kills their
// commands) and waits for every goroutine of the server.
func (s *sshServer) close() {
	_ = s.listener.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *sshServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.listener.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.conns == nil {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[nc] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(nc)
	}
}

func (s *sshServer) serve(nc net.Conn) {
	defer s.wg.Done()
	defer func() {
		_ = nc.Close()
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
	}()
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.config)
	if err != nil {
		return // a refused key, or a client that hung up
	}
	defer func() { _ = conn.Close() }()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ssh.DiscardRequests(reqs)
	}()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "only sessions are served")
			continue
		}
		ch, chReqs, err := nch.Accept()
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go s.session(conn, ch, chReqs)
	}
}

// session serves one session channel until it closes.
func (s *sshServer) session(conn *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer s.wg.Done()
	home, _ := os.UserHomeDir()
	local, remote := conn.LocalAddr().(*net.TCPAddr), conn.RemoteAddr().(*net.TCPAddr)
	// What sshd gives a command before the client's env requests.
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=" + s.user, "LOGNAME=" + s.user,
		fmt.Sprintf("SSH_CONNECTION=%s %d %s %d", remote.IP, remote.Port, local.IP, local.Port),
	}
	var cmd *exec.Cmd
	exited := make(chan struct{})
	for req := range reqs {
		ok := false
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(req.Payload, &kv) == nil && cmd == nil {
				env, ok = append(env, kv.Name+"="+kv.Value), true
			}
		case "exec":
			var p struct{ Command string }
			if ssh.Unmarshal(req.Payload, &p) == nil && cmd == nil {
				cmd = s.start(ch, p.Command, env, home, exited)
				ok = cmd != nil
			}
		}
		// Anything else (pty-req, shell, subsystem, signals) is refused:
		// an MCP server over ssh needs none of it.
		_ = req.Reply(ok, nil)
	}
	// The channel is closed: by the client (or its death), or by run
	// after the command exited.
	if cmd != nil {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	_ = ch.Close()
}

// start runs command for ch, or answers the request with an error on
// stderr and returns nil when it cannot start. exited is closed once the
// command is gone and its status sent.
func (s *sshServer) start(ch ssh.Channel, command string, env []string, dir string, exited chan struct{}) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_, _ = fmt.Fprintf(ch.Stderr(), "test ssh server: %v\n", err)
		return nil
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_, _ = io.Copy(stdin, ch) // until the client's EOF, or the channel closes
		_ = stdin.Close()
	}()
	go func() {
		defer s.wg.Done()
		defer close(exited)
		err := cmd.Wait() // stdout and stderr are copied out by now
		status := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			status = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				status = 128 + int(ws.Signal()) // as a shell reports it
			}
		}
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
		_ = ch.Close()
	}()
	return cmd
}
