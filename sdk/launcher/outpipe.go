package launcher

import "sync"

// outPipe hands one output stream (stdout or stderr) of a remote process
// from the receive loop to its reader without buffering: deliver blocks
// until a Read has taken all of the chunk, so that a reader that stops
// reading stops the receive loop, and gRPC flow control then stops the
// plugin. Data is never copied except into the reader's buffer.
//
// (Measured: letting the loop go back to receiving right after the
// hand-off, and wait for consumption only before the next delivery, cost
// more context switches per round trip, not fewer: the reader and the
// loop then run on different threads instead of handing one P back and
// forth.)
type outPipe struct {
	data     chan []byte   // unbuffered: receive loop → reader
	consumed chan struct{} // capacity 1: reader → receive loop, "chunk fully read"
	end      chan struct{} // closed by the receive loop after its last deliver; err set before
	err      error

	mu   sync.Mutex // serializes readers; guards rest
	rest []byte     // the part of the current chunk not yet read
}

func newOutPipe() *outPipe {
	return &outPipe{
		data:     make(chan []byte),
		consumed: make(chan struct{}, 1),
		end:      make(chan struct{}),
	}
}

// deliver gives b to readers and returns once they have read all of it.
// Once abandon is closed it no longer waits: b goes to a reader already
// waiting for data, or is dropped.
func (p *outPipe) deliver(b []byte, abandon <-chan struct{}) {
	if len(b) == 0 {
		return
	}
	select {
	case p.data <- b:
	case <-abandon:
		select {
		case p.data <- b:
		default:
			return
		}
	}
	select {
	case <-p.consumed:
	case <-abandon:
	}
}

// finish ends the stream: readers get the rest of the current chunk, then
// err (io.EOF for a clean end). Only the receive loop calls it, once.
func (p *outPipe) finish(err error) {
	p.err = err
	close(p.end)
}

func (p *outPipe) read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.rest) == 0 {
		select {
		case chunk := <-p.data:
			p.rest = chunk
		case <-p.end:
			return 0, p.err
		}
	}
	n := copy(b, p.rest)
	p.rest = p.rest[n:]
	if len(p.rest) == 0 {
		p.rest = nil
		// Never blocks: the receive loop waits for exactly this token,
		// unless it stopped waiting (abandon), in which case a stale token
		// may already sit in the channel and this one is not needed.
		select {
		case p.consumed <- struct{}{}:
		default:
		}
	}
	return n, nil
}
