//go:build linux

package launcher

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
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
)

// fdPassingSupported: a host here can take descriptors and a plugin here
// can offer them.
const fdPassingSupported = true

// Errors of the plugin's side of a hand-off; they reach only its log.
var (
	errNotPipes       = errors.New("the process's stdin, stdout and stderr are not all *os.File pipes")
	errNoConnection   = errors.New("the host did not connect")
	errNonceMismatch  = errors.New("the peer sent the wrong nonce")
	errPeerUID        = errors.New("the peer runs as another user")
	errNoDescriptors  = errors.New("the launcher closed the hand-off connection without sending descriptors (it refused the hand-off)")
	errBadDescriptors = errors.New("the launcher sent descriptors that are not the process's pipes")
)

// fdOffer is a plugin's offer of a process's pipes: a unix socket in a
// fresh directory only this user can enter, taken by the first
// connection, which must come from this user and present the nonce. The
// plugin sends path and nonce to the host over the authenticated launch
// stream; the offer's goroutine serves the one connection.
type fdOffer struct {
	files  [3]*os.File // stdin, stdout, stderr: the plugin's copies
	dir    string      // the socket's private directory; removed by close
	path   string
	nonce  []byte
	ln     *net.UnixListener
	faults fdFaults

	done chan struct{} // closed when the connection was served; sent and err set before
	sent bool
	err  error
}

// newFDOffer prepares the offer of proc's pipes and starts listening, or
// says why it cannot.
func newFDOffer(proc Process, faults fdFaults) (*fdOffer, error) {
	files, err := pipeFiles(proc)
	if err != nil {
		return nil, err
	}
	// go-plugin's socket directory when the host set one, like the
	// plugin's own gRPC socket; MkdirTemp makes it 0700.
	dir, err := os.MkdirTemp(os.Getenv(plugin.EnvUnixSocketDir), "toolgate-fds-")
	if err != nil {
		return nil, fmt.Errorf("creating the hand-off directory: %w", err)
	}
	path := filepath.Join(dir, "fds.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("listening for the hand-off: %w", err)
	}
	nonce := make([]byte, fdNonceSize)
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	o := &fdOffer{files: files, dir: dir, path: path, nonce: nonce, ln: ln, faults: faults, done: make(chan struct{})}
	go o.serve()
	return o, nil
}

func (o *fdOffer) pb() *launcherv1.FdOffer {
	return &launcherv1.FdOffer{SocketPath: o.path, Nonce: o.nonce}
}

// close stops listening, removes the socket's directory, and reports
// whether the descriptors were sent (and why not). A pending accept ends
// with net.ErrClosed.
func (o *fdOffer) close() (sent bool, err error) {
	o.stopListening()
	<-o.done
	return o.sent, o.err
}

func (o *fdOffer) stopListening() {
	_ = o.ln.Close()
	_ = os.RemoveAll(o.dir)
}

func (o *fdOffer) serve() {
	defer close(o.done)
	o.err = o.handOver()
	o.sent = o.err == nil
}

func (o *fdOffer) handOver() error {
	conn, err := o.accept()
	if err != nil {
		return err
	}
	defer conn.Close()
	return withRawFDs(o.files[:], nil, func(fds []int) error {
		if _, _, err := conn.WriteMsgUnix([]byte{1}, unix.UnixRights(fds...), nil); err != nil {
			return fmt.Errorf("sending the descriptors: %w", err)
		}
		return nil
	})
}

// accept takes the one connection the offer allows and checks it: the
// peer's user, then the nonce. The socket is gone before anything is
// checked, so whoever connects first gets the only try.
func (o *fdOffer) accept() (*net.UnixConn, error) {
	_ = o.ln.SetDeadline(time.Now().Add(fdHandoffTimeout))
	conn, err := o.ln.AcceptUnix()
	o.stopListening()
	if errors.Is(err, net.ErrClosed) {
		return nil, errNoConnection // the host settled without connecting
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for the host to connect: %w", err)
	}
	if err := o.checkPeer(conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// checkPeer refuses a peer of another user or with the wrong nonce.
// Both checks share one deadline: a peer that connects and stays silent
// cannot hold the offer past it.
func (o *fdOffer) checkPeer(conn *net.UnixConn) error {
	_ = conn.SetDeadline(time.Now().Add(fdHandoffTimeout))
	peerUID := socketPeerUID
	if o.faults.peerUID != nil {
		peerUID = o.faults.peerUID
	}
	uid, err := peerUID(conn)
	if err != nil {
		return fmt.Errorf("checking the peer's credentials: %w", err)
	}
	if int64(uid) != int64(os.Getuid()) {
		return fmt.Errorf("%w (uid %d, not %d)", errPeerUID, uid, os.Getuid())
	}
	got := make([]byte, len(o.nonce))
	if _, err := io.ReadFull(conn, got); err != nil {
		return fmt.Errorf("reading the nonce: %w", err)
	}
	if subtle.ConstantTimeCompare(got, o.nonce) != 1 {
		return errNonceMismatch
	}
	return nil
}

// socketPeerUID returns the user id of the process at the other end of
// conn (for the connecting side: the process that listens).
func socketPeerUID(conn *net.UnixConn) (uint32, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return cred.Uid, nil
}

// withRawFDs calls fn with the descriptors of files, each held valid (and
// left in its blocking mode, unlike File.Fd) while fn runs.
func withRawFDs(files []*os.File, fds []int, fn func([]int) error) error {
	if len(files) == 0 {
		return fn(fds)
	}
	raw, err := files[0].SyscallConn()
	if err != nil {
		return err
	}
	var fnErr error
	if err := raw.Control(func(fd uintptr) {
		fnErr = withRawFDs(files[1:], append(fds, int(fd)), fn)
	}); err != nil {
		return err
	}
	return fnErr
}

// pipeFiles returns proc's stdio if all three are pipes the host can use
// as they are: *os.File values, FIFOs, stdin writable and the outputs
// readable.
func pipeFiles(proc Process) ([3]*os.File, error) {
	var files [3]*os.File
	var ok [3]bool
	files[0], ok[0] = proc.Stdin().(*os.File)
	files[1], ok[1] = proc.Stdout().(*os.File)
	files[2], ok[2] = proc.Stderr().(*os.File)
	if !ok[0] || !ok[1] || !ok[2] || files[0] == nil || files[1] == nil || files[2] == nil {
		return files, errNotPipes
	}
	err := withRawFDs(files[:], nil, func(fds []int) error {
		for i, fd := range fds {
			if err := checkPipe(fd, i == 0); err != nil {
				return fmt.Errorf("%w: %s: %w", errNotPipes, stdioNames[i], err)
			}
		}
		return nil
	})
	return files, err
}

var stdioNames = [3]string{"stdin", "stdout", "stderr"}

// checkPipe reports whether fd is a pipe open for writing (stdin) or
// reading (an output).
func checkPipe(fd int, writeEnd bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return errors.New("not a pipe")
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	want := unix.O_RDONLY
	if writeEnd {
		want = unix.O_WRONLY
	}
	if flags&unix.O_ACCMODE != want {
		return errors.New("open in the wrong direction")
	}
	return nil
}

// fetchFDs connects to an offer's socket, presents its nonce and returns
// the three pipes the plugin sends, checked. Any error leaves nothing
// open.
func fetchFDs(ctx context.Context, offer *launcherv1.FdOffer, faults fdFaults) (*stdioFiles, error) {
	nonce := offer.GetNonce()
	if len(nonce) < minFDNonceSize {
		return nil, fmt.Errorf("the offer's nonce has %d bytes, fewer than %d", len(nonce), minFDNonceSize)
	}
	if faults.wrongNonce {
		nonce = make([]byte, len(nonce))
	}
	path := offer.GetSocketPath()
	if faults.socketPath != "" {
		path = faults.socketPath
	}
	ctx, cancel := context.WithTimeout(ctx, fdHandoffTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connecting to the launcher's hand-off socket: %w", err)
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	// The socket came over the authenticated stream and sits in a
	// directory only the plugin's user can enter; still, take pipes only
	// from a process of our own user.
	uid, err := socketPeerUID(conn)
	if err != nil {
		return nil, fmt.Errorf("checking the launcher's credentials: %w", err)
	}
	if int64(uid) != int64(os.Getuid()) {
		return nil, fmt.Errorf("the hand-off socket belongs to uid %d, not %d", uid, os.Getuid())
	}
	if _, err := conn.Write(nonce); err != nil {
		return nil, fmt.Errorf("sending the nonce: %w", err)
	}
	// Room for more descriptors than expected, so that extra ones are
	// received (and closed) rather than cut off.
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(16*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	fds, parseErr := parseRights(oob[:oobn])
	closeFDs := func() {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}
	switch {
	case errors.Is(err, io.EOF) && len(fds) == 0:
		return nil, errNoDescriptors
	case err != nil:
		closeFDs()
		return nil, fmt.Errorf("receiving the descriptors: %w", err)
	case parseErr != nil:
		closeFDs()
		return nil, fmt.Errorf("receiving the descriptors: %w", parseErr)
	case n == 0 && len(fds) == 0:
		return nil, errNoDescriptors
	case flags&unix.MSG_CTRUNC != 0 || n != 1 || len(fds) != 3:
		closeFDs()
		return nil, fmt.Errorf("%w: got %d", errBadDescriptors, len(fds))
	}
	for i, fd := range fds {
		if err := checkPipe(fd, i == 0); err != nil {
			closeFDs()
			return nil, fmt.Errorf("%w: %s: %w", errBadDescriptors, stdioNames[i], err)
		}
	}
	// Non-blocking, so that the files use the runtime's poller: reads and
	// writes park goroutines, not threads, and Close interrupts them. (They
	// normally are already: the flag belongs to the pipe's open file,
	// shared with the plugin's copy.)
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			closeFDs()
			return nil, fmt.Errorf("receiving the descriptors: %w", err)
		}
	}
	files := &stdioFiles{
		stdin:  os.NewFile(uintptr(fds[0]), "stdin"),
		stdout: os.NewFile(uintptr(fds[1]), "stdout"),
		stderr: os.NewFile(uintptr(fds[2]), "stderr"),
	}
	// Only a file in the poller takes deadlines, which Stderr's hand-over
	// needs to interrupt a read.
	for _, f := range []*os.File{files.stdin, files.stdout, files.stderr} {
		if err := f.SetDeadline(time.Time{}); err != nil {
			files.close()
			return nil, fmt.Errorf("receiving the descriptors: %w", err)
		}
	}
	return files, nil
}

// parseRights returns every descriptor in the control messages (received
// close-on-exec: the net package asks for MSG_CMSG_CLOEXEC).
func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for i := range msgs {
		if msgs[i].Header.Level != syscall.SOL_SOCKET || msgs[i].Header.Type != syscall.SCM_RIGHTS {
			continue
		}
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			return fds, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}
