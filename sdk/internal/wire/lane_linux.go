//go:build linux

package wire

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

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

// Offer opens a lane for one host connection (a Rendezvous) and serves
// it until it breaks or s is closed.
func (s *LaneServer) Offer() (*pluginv1.OpenLaneResponse, error) {
	rv, err := Listen("lane", "lane", laneNonceSize)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = rv.Close()
		return nil, errLaneClosed
	}
	s.offers[rv] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		conn, err := s.accept(rv)
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
	return &pluginv1.OpenLaneResponse{SocketPath: rv.Path, Nonce: rv.Nonce}, nil
}

// accept takes the host's connection and acknowledges its nonce.
func (s *LaneServer) accept(rv *Rendezvous) (*net.UnixConn, error) {
	conn, err := rv.Accept(laneHandshakeTimeout, nil)
	s.untrack(rv)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte{laneAck}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("accepting the peer: %w", err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
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
