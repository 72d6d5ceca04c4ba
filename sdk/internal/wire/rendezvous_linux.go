//go:build linux

package wire

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-plugin"
)

// Errors of Rendezvous.Accept: the connection was refused.
var (
	ErrWrongNonce = errors.New("the peer sent the wrong nonce")
	ErrPeerUser   = errors.New("the peer runs as another user")
)

// Rendezvous is how a plugin hands the host a private unix socket over the
// authenticated gRPC connection (the direct lane, the launcher's
// descriptor hand-off): a socket in a fresh directory only this user can
// enter, taken by the first connection, which must come from this user
// and present a random nonce. The plugin sends Path and Nonce to the
// host, then calls Accept once.
type Rendezvous struct {
	Path  string // the socket
	Dir   string // its private directory; removed by Close
	Nonce []byte
	ln    *net.UnixListener
}

// Listen opens a rendezvous named name ("lane", "fds") with a nonce of
// nonceSize random bytes. purpose names it in errors.
func Listen(name, purpose string, nonceSize int) (*Rendezvous, error) {
	// go-plugin's socket directory when the host set one, like the
	// plugin's own gRPC socket; MkdirTemp makes it 0700.
	dir, err := os.MkdirTemp(os.Getenv(plugin.EnvUnixSocketDir), "toolgate-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("creating the %s directory: %w", purpose, err)
	}
	path := filepath.Join(dir, name+".sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("listening for the %s: %w", purpose, err)
	}
	nonce := make([]byte, nonceSize)
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	return &Rendezvous{Path: path, Dir: dir, Nonce: nonce, ln: ln}, nil
}

// Close stops listening and removes the directory; a pending Accept
// returns an error matching net.ErrClosed. Idempotent.
func (r *Rendezvous) Close() error {
	_ = r.ln.Close()
	return os.RemoveAll(r.Dir)
}

// Accept takes the one connection the rendezvous allows, within timeout,
// and checks it: the peer's user (through peerUID; nil means PeerUID),
// then the nonce. The socket is gone before anything is checked, so
// whoever connects first gets the only try. The connection keeps its
// deadline for the caller's own part of the handshake.
func (r *Rendezvous) Accept(timeout time.Duration, peerUID func(*net.UnixConn) (uint32, error)) (*net.UnixConn, error) {
	if peerUID == nil {
		peerUID = PeerUID
	}
	_ = r.ln.SetDeadline(time.Now().Add(timeout))
	conn, err := r.ln.AcceptUnix()
	_ = r.Close()
	if err != nil {
		return nil, fmt.Errorf("waiting for the host to connect: %w", err)
	}
	check := func() error {
		_ = conn.SetDeadline(time.Now().Add(timeout))
		uid, err := peerUID(conn)
		if err != nil {
			return fmt.Errorf("checking the peer's credentials: %w", err)
		}
		if int64(uid) != int64(os.Getuid()) {
			return fmt.Errorf("%w (uid %d, not %d)", ErrPeerUser, uid, os.Getuid())
		}
		got := make([]byte, len(r.Nonce))
		if _, err := io.ReadFull(conn, got); err != nil {
			return fmt.Errorf("reading the nonce: %w", err)
		}
		if subtle.ConstantTimeCompare(got, r.Nonce) != 1 {
			return ErrWrongNonce
		}
		return nil
	}
	if err := check(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}
