//go:build linux

package wire

import (
	"context"
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
	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
)

// LaneSupported says whether this platform can offer and open direct
// lanes: it needs the peer's credentials of a unix socket.
const LaneSupported = true

// laneAck is the byte a plugin writes once it accepted the host's nonce.
const laneAck = 1

// PeerUID returns the user id of the process at the other end of conn.
func PeerUID(conn *net.UnixConn) (uint32, error) {
	cred, err := peerCred(conn)
	if err != nil {
		return 0, err
	}
	return cred.Uid, nil
}

// peerCred returns the credentials of the process at the other end of
// conn (for a connecting side: the process that listens).
func peerCred(conn *net.UnixConn) (*unix.Ucred, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}

// Offer opens a lane for one host connection: a unix socket in a fresh
// directory only this user can enter, and the nonce the host must
// present. The lane is served until it breaks or s is closed.
func (s *LaneServer) Offer() (*pluginv1.OpenLaneResponse, error) {
	// go-plugin's socket directory when the host set one, like the
	// plugin's own gRPC socket; MkdirTemp makes it 0700.
	dir, err := os.MkdirTemp(os.Getenv(plugin.EnvUnixSocketDir), "toolgate-lane-")
	if err != nil {
		return nil, fmt.Errorf("creating the lane's directory: %w", err)
	}
	path := filepath.Join(dir, "lane.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("listening for the lane: %w", err)
	}
	nonce := make([]byte, laneNonceSize)
	_, _ = rand.Read(nonce) // never fails (crypto/rand)

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		_ = os.RemoveAll(dir)
		return nil, errLaneClosed
	}
	s.lns[ln] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		conn, err := s.accept(ln, dir, nonce)
		if err != nil {
			s.log.Warn("the host did not take up the direct lane; calls stay on gRPC", "error", err)
			return
		}
		if !s.track(conn) {
			_ = conn.Close()
			return
		}
		defer s.untrack(conn)
		s.serve(conn)
	}()
	return &pluginv1.OpenLaneResponse{SocketPath: path, Nonce: nonce}, nil
}

// accept takes the one connection an offer allows and checks it: the
// peer's user, then the nonce. The socket is gone before anything is
// checked, so whoever connects first gets the only try.
func (s *LaneServer) accept(ln *net.UnixListener, dir string, nonce []byte) (*net.UnixConn, error) {
	_ = ln.SetDeadline(time.Now().Add(laneHandshakeTimeout))
	conn, err := ln.AcceptUnix()
	_ = ln.Close()
	s.untrack(ln)
	_ = os.RemoveAll(dir)
	if err != nil {
		return nil, fmt.Errorf("waiting for the host to connect: %w", err)
	}
	check := func() error {
		_ = conn.SetDeadline(time.Now().Add(laneHandshakeTimeout))
		uid, err := PeerUID(conn)
		if err != nil {
			return fmt.Errorf("checking the peer's credentials: %w", err)
		}
		if int64(uid) != int64(os.Getuid()) {
			return fmt.Errorf("the peer runs as uid %d, not %d", uid, os.Getuid())
		}
		got := make([]byte, len(nonce))
		if _, err := io.ReadFull(conn, got); err != nil {
			return fmt.Errorf("reading the nonce: %w", err)
		}
		if subtle.ConstantTimeCompare(got, nonce) != 1 {
			return errors.New("the peer sent the wrong nonce")
		}
		if _, err := conn.Write([]byte{laneAck}); err != nil {
			return fmt.Errorf("accepting the peer: %w", err)
		}
		return conn.SetDeadline(time.Time{})
	}
	if err := check(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// dialLane connects to an offered lane and presents its nonce. pid, when
// not 0, is the plugin process's id: the socket must be its own.
func dialLane(ctx context.Context, offer *pluginv1.OpenLaneResponse, pid int) (*Lane, error) {
	nonce := offer.GetNonce()
	if len(nonce) < laneNonceSize {
		return nil, BadResponse("the lane's nonce has %d bytes, fewer than %d", len(nonce), laneNonceSize)
	}
	ctx, cancel := context.WithTimeout(ctx, laneHandshakeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", offer.GetSocketPath())
	if err != nil {
		return nil, fmt.Errorf("connecting to the plugin's lane: %w", err)
	}
	conn := c.(*net.UnixConn)
	ok := false
	defer func() {
		if !ok {
			_ = conn.Close()
		}
	}()
	if deadline, has := ctx.Deadline(); has {
		_ = conn.SetDeadline(deadline)
	}
	// The path came over the authenticated gRPC connection and sits in a
	// directory only the plugin's user can enter; still, talk only to the
	// plugin process itself (a process of the same user could otherwise
	// swap the socket), or at least to a process of our own user.
	cred, err := peerCred(conn)
	if err != nil {
		return nil, fmt.Errorf("checking the plugin's credentials: %w", err)
	}
	if int64(cred.Uid) != int64(os.Getuid()) {
		return nil, fmt.Errorf("the lane's socket belongs to uid %d, not %d", cred.Uid, os.Getuid())
	}
	if pid != 0 && int(cred.Pid) != pid {
		return nil, fmt.Errorf("the lane's socket belongs to pid %d, not to the plugin (pid %d)", cred.Pid, pid)
	}
	if _, err := conn.Write(nonce); err != nil {
		return nil, fmt.Errorf("sending the lane's nonce: %w", err)
	}
	var ack [1]byte
	if _, err := io.ReadFull(conn, ack[:]); err != nil {
		return nil, fmt.Errorf("the plugin refused the lane: %w", err)
	}
	if ack[0] != laneAck {
		return nil, fmt.Errorf("the plugin answered the lane's nonce with %#x, not %#x", ack[0], laneAck)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	ok = true
	return newLane(conn), nil
}
