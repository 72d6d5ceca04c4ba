package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// UnixPrefix marks a listen address that is a unix socket path:
// `toolgate serve --http unix:/run/user/1000/toolgate.sock`.
const UnixPrefix = "unix:"

// maxSocketPath is the longest socket path every platform takes
// (sockaddr_un's sun_path is 104 bytes on macOS, 108 on Linux, with its
// terminating NUL).
const maxSocketPath = 103

// unixEndpoint is NewEndpoint for a unix socket path: reachable by the
// processes of the user who owns it (mode 0600), so for a single-user
// setup it needs no token; one is still required when configured.
func unixEndpoint(addr string) (*Endpoint, error) {
	path := strings.TrimPrefix(addr, UnixPrefix)
	if runtime.GOOS == "windows" {
		// Go speaks AF_UNIX on Windows, but file modes do not restrict
		// who may connect there, so the socket would not be private.
		return nil, fmt.Errorf("%w: --http %s: unix socket listeners are not offered on Windows, where toolgate cannot make the socket private to you; "+
			"listen on 127.0.0.1 and set serve { token_env_var } instead", ErrUnsafeListen, addr)
	}
	if path == "" {
		return nil, fmt.Errorf("%w: --http unix: needs a socket path, such as unix:$XDG_RUNTIME_DIR/toolgate.sock", ErrUnsafeListen)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: socket path %q: %w", ErrUnsafeListen, path, err)
	}
	if len(abs) > maxSocketPath-16 { // room for listenUnix's private directory
		return nil, fmt.Errorf("%w: socket path %q is %d bytes long; unix sockets allow about %d: pick a shorter path",
			ErrUnsafeListen, abs, len(abs), maxSocketPath-16)
	}
	return &Endpoint{Network: "unix", Addr: abs, Loopback: true}, nil
}

// Listen opens e's listener: TCP at e.Addr, or a unix socket at e.Addr
// created with mode 0600. A leftover socket nobody listens on is
// replaced; a live one, or any other file, is refused.
func Listen(e *Endpoint) (net.Listener, error) {
	if e.Network != "unix" {
		return net.Listen("tcp", e.Addr)
	}
	return listenUnix(e.Addr)
}

// listenUnix binds the socket in a private directory (mode 0700) next
// to path, sets its mode to 0600 and only then renames it into place, so
// no other user can connect in between, whatever the umask.
func listenUnix(path string) (net.Listener, error) {
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".tg")
	if err != nil {
		return nil, fmt.Errorf("creating the socket %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("creating the socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("making the socket %s private: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("creating the socket %s: %w", path, err)
	}
	return &unixListener{UnixListener: ln, path: path}, nil
}

// removeStaleSocket removes a socket at path that nobody listens on (a
// toolgate that was killed leaves one behind).
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking the socket path %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; toolgate will not replace it: pick another path", path)
	}
	conn, err := net.Dial("unix", path)
	if err == nil {
		_ = conn.Close()
		return fmt.Errorf("%s is in use (is another toolgate serve running?); pick another path", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s exists and cannot be checked (%w); remove it if no toolgate serve uses it", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	return nil
}

// unixListener reports and removes the socket's final path; the
// net.UnixListener knows only the name it was bound to.
type unixListener struct {
	*net.UnixListener
	path string
	once sync.Once
}

func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() { _ = os.Remove(l.path) })
	return err
}
