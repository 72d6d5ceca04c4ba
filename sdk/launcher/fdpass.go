package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// IOMode says how a [RemoteProcess]'s stdin, stdout and stderr travel.
type IOMode int

// I/O modes. The zero value is ModeStream.
const (
	// ModeStream: in frames on the launch stream, through the plugin.
	ModeStream IOMode = iota
	// ModePassedFDs: the plugin passed the process's own pipes to the
	// host, which reads and writes them directly; the launch stream
	// carries only signals and the exit. Negotiated per process, when
	// host and plugin share a machine (Linux) and the process's stdio
	// are pipes: see [ClientOptions.StreamOnly] and [Process].
	ModePassedFDs
)

func (m IOMode) String() string {
	switch m {
	case ModeStream:
		return "stream"
	case ModePassedFDs:
		return "passed-fds"
	}
	return fmt.Sprintf("IOMode(%d)", int(m))
}

// CapabilityPassFDs is listed in Info by launchers built with an SDK
// that can hand a process's pipes to the host (on Linux). Whether it does
// is still decided per process: see [ModePassedFDs].
const CapabilityPassFDs = "pass-fds"

const (
	// fdHandoffTimeout bounds each side's part of the hand-off socket
	// exchange (connect, nonce, descriptors); past it, the stream is used.
	fdHandoffTimeout = 5 * time.Second
	// fdNonceSize is the size of the one-time secret of an offer: 256 bits.
	fdNonceSize = 32
	// minFDNonceSize is the least a host accepts in an offer (128 bits).
	minFDNonceSize = 16
)

// fdFaults breaks the descriptor hand-off on purpose, so that tests can
// check each fallback. The zero value breaks nothing.
type fdFaults struct {
	// Plugin side.
	noOffer bool                                // never offer
	peerUID func(*net.UnixConn) (uint32, error) // replaces SO_PEERCRED
	// Host side.
	wrongNonce bool   // write a nonce that does not match the offer's
	socketPath string // dial this instead of the offered path
}

// stdioFiles are a process's pipes as the host holds them after a
// hand-off: the write end of its stdin, the read ends of its outputs.
type stdioFiles struct {
	stdin, stdout, stderr *os.File
}

func (f *stdioFiles) close() {
	if f == nil {
		return
	}
	for _, file := range []*os.File{f.stdin, f.stdout, f.stderr} {
		if file != nil {
			_ = file.Close()
		}
	}
}

// passedIO is the host's side of a process whose pipes were passed: Read
// and Write use the pipes directly, with no goroutine in between. The
// only goroutines are the early stderr drain (until Stderr is called,
// so that unread stderr never blocks the process) and, once Close has
// begun, the discards that keep the process from blocking on output
// nobody reads.
type passedIO struct {
	files *stdioFiles

	// goroutines over the pipes; Close waits for them
	wg sync.WaitGroup

	// earlyMu guards early and handover between the early drain and
	// Stderr.
	earlyMu   sync.Mutex
	early     []byte        // stderr read before Stderr was called, at most MaxEarlyStderr
	handover  bool          // Stderr was called: the drain must stop
	drainDone chan struct{} // closed when the early drain has stopped

	discardOnce sync.Once
	stderrTaken bool // Stderr was called (guarded by RemoteProcess.earlyMu)

	drainTimer *time.Timer // closes the outputs a grace after the exit; guarded by timerMu
	timerMu    sync.Mutex
}

func newPassedIO(files *stdioFiles) *passedIO {
	pio := &passedIO{files: files, drainDone: make(chan struct{})}
	pio.wg.Add(1)
	go pio.drainEarlyStderr()
	return pio
}

// drainEarlyStderr keeps stderr moving until a reader asks for it, as a
// pipe's buffer would hold it for the stream's early stderr: the first
// MaxEarlyStderr bytes are kept, the rest discarded.
func (pio *passedIO) drainEarlyStderr() {
	defer pio.wg.Done()
	defer close(pio.drainDone)
	buf := make([]byte, 4<<10)
	for {
		n, err := pio.files.stderr.Read(buf)
		pio.earlyMu.Lock()
		room := max(MaxEarlyStderr-len(pio.early), 0)
		pio.early = append(pio.early, buf[:min(n, room)]...)
		stop := pio.handover
		pio.earlyMu.Unlock()
		if err != nil || stop {
			return
		}
	}
}

// takeEarlyStderr stops the early drain and returns what it kept; the
// caller then reads the pipe itself.
func (pio *passedIO) takeEarlyStderr() []byte {
	pio.earlyMu.Lock()
	pio.handover = true
	pio.earlyMu.Unlock()
	// Wakes a drain blocked on an idle pipe; a closed file fails here and
	// has already ended the drain.
	_ = pio.files.stderr.SetReadDeadline(time.Now())
	<-pio.drainDone
	_ = pio.files.stderr.SetReadDeadline(time.Time{})
	pio.earlyMu.Lock()
	defer pio.earlyMu.Unlock()
	early := pio.early
	pio.early = nil
	return early
}

// discardOutputs starts reading and dropping the outputs, once Close has
// begun, so that a process blocked writing output nobody reads can still
// see its stdin close and exit. A Read already waiting for data is served
// first: reads of one file are serialized.
func (pio *passedIO) discardOutputs(stderrTaken bool) {
	pio.discardOnce.Do(func() {
		outputs := []*os.File{pio.files.stdout}
		if stderrTaken { // otherwise the early drain is still discarding it
			outputs = append(outputs, pio.files.stderr)
		}
		for _, f := range outputs {
			pio.wg.Add(1)
			go func() {
				defer pio.wg.Done()
				_, _ = io.Copy(io.Discard, f)
			}()
		}
	})
}

// closeOutputsAfter closes the outputs once grace has passed, for a
// descendant of the exited process that keeps them open: the stream
// mode's shim gives up on them the same way.
func (pio *passedIO) closeOutputsAfter(grace time.Duration) {
	pio.timerMu.Lock()
	defer pio.timerMu.Unlock()
	if pio.drainTimer == nil {
		pio.drainTimer = time.AfterFunc(grace, pio.closeOutputs)
	}
}

func (pio *passedIO) closeOutputs() {
	_ = pio.files.stdout.Close()
	_ = pio.files.stderr.Close()
}

// closeAll closes the three pipes and waits for the goroutines reading
// them, which the close ends.
func (pio *passedIO) closeAll() {
	pio.timerMu.Lock()
	if pio.drainTimer != nil {
		pio.drainTimer.Stop()
	}
	pio.timerMu.Unlock()
	pio.files.close()
	pio.wg.Wait()
}

// passedOutput reads one passed output pipe; its end is reported as the
// stream's would be, once the process's end is known.
type passedOutput struct {
	p *RemoteProcess
	f *os.File
}

func (o passedOutput) Read(b []byte) (int, error) {
	n, err := o.f.Read(b)
	if n > 0 || err == nil {
		return n, nil
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
		return 0, fmt.Errorf("reading output of %q: %w", o.p.server, err)
	}
	// EOF (every writer closed it) or closed by us: either way the output
	// has ended. Whether that is a clean end is for the stream to say, as
	// it would in stream mode: a plugin that dies kills the process, whose
	// pipes then end before the broken stream is noticed.
	<-o.p.done
	return 0, o.p.outputEnd()
}

// passedWrite writes to the passed stdin pipe.
func (p *RemoteProcess) passedWrite(b []byte) (int, error) {
	if err := p.writable(); err != nil {
		return 0, err
	}
	n, err := p.pio.files.stdin.Write(b)
	if err == nil {
		return n, nil
	}
	if err := p.writable(); err != nil { // closed under us by Close or Stdin().Close
		return n, err
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		select {
		case <-p.done:
			if p.endErr != nil && !errors.Is(p.endErr, errAbandoned) {
				return n, fmt.Errorf("writing to stdin of %q: %w", p.server, p.endErr)
			}
		default:
		}
		return n, fmt.Errorf("writing to stdin of %q: the process closed its stdin: %w", p.server, io.ErrClosedPipe)
	}
	return n, fmt.Errorf("writing to stdin of %q: %w", p.server, err)
}

// passedStderr hands stderr over from the early drain to the caller.
func (p *RemoteProcess) passedStderr() io.Reader {
	early := p.pio.takeEarlyStderr()
	p.pio.stderrTaken = true
	return io.MultiReader(bytes.NewReader(early), passedOutput{p, p.pio.files.stderr})
}
