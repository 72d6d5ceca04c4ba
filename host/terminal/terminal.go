package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/host/approval"
)

// Options configure a [Terminal].
type Options struct {
	// Interactive says a human is at the other end of in and out (the
	// caller checks, e.g. with golang.org/x/term.IsTerminal on stdin).
	// false: every question returns an error wrapping
	// approval.ErrNobodyToAsk ("stdin is not a terminal") without
	// reading or writing anything.
	Interactive bool
	// Color enables ANSI colors and bold text.
	Color bool
}

// Terminal asks a human through a line-oriented terminal. It implements
// pipeline.Upstream (and so [approval.Asker]).
type Terminal struct {
	// fixed at construction
	in    io.Reader
	out   io.Writer
	opts  Options
	style style

	// turn holds one token while a question is on screen: prompts from
	// concurrent calls wait their turn (or their ctx) instead of
	// interleaving on the screen.
	turn chan struct{}
	// lines carries input lines from the reader goroutine, which closes it
	// at EOF or on a read error. Unbuffered: a line is taken from in only
	// when the reader is ready to hand it over.
	lines chan line
	done  chan struct{} // closed by Close

	startReader sync.Once
	closeOnce   sync.Once
}

var _ approval.Asker = (*Terminal)(nil)

// line is one line of input and when it was read. Lines read before a
// question was shown were typed ahead (a stray "y" while the model was
// working) and are discarded, so they never answer a question the user
// has not seen.
type line struct {
	text string
	at   time.Time
}

// New returns a Terminal reading answers from in and writing questions to
// out. Nothing is started until the first question. After New the
// Terminal owns in: [Terminal.Close] closes it when it is an io.Closer.
func New(in io.Reader, out io.Writer, opts Options) *Terminal {
	return &Terminal{
		in:    in,
		out:   out,
		opts:  opts,
		style: style{color: opts.Color},
		turn:  make(chan struct{}, 1),
		lines: make(chan line),
		done:  make(chan struct{}),
	}
}

// Close stops the reader goroutine and makes every later question return
// an error wrapping approval.ErrNobodyToAsk. It closes in when in is an
// io.Closer, which ends a Read the goroutine is blocked in; otherwise the
// goroutine ends at the next line or at EOF of in. EOF alone also ends it.
// Close is idempotent and safe to call concurrently with questions.
func (t *Terminal) Close() error {
	var err error
	t.closeOnce.Do(func() {
		close(t.done)
		if c, ok := t.in.(io.Closer); ok {
			err = c.Close()
		}
	})
	return err
}

// readLoop is the one goroutine that reads in. It owns t.lines and closes
// it when in ends; it returns early when Close is called.
func (t *Terminal) readLoop() {
	defer close(t.lines)
	r := bufio.NewReader(t.in)
	for {
		s, err := r.ReadString('\n')
		if s != "" || err == nil {
			l := line{text: strings.TrimRight(s, "\r\n"), at: time.Now()}
			select {
			case t.lines <- l:
			case <-t.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

var (
	errNotInteractive = fmt.Errorf("%w: stdin is not a terminal", approval.ErrNobodyToAsk)
	errClosed         = fmt.Errorf("%w: the terminal was closed", approval.ErrNobodyToAsk)
)

// begin waits for this caller's turn at the screen and starts the reader
// on first use. The returned func gives the turn back.
func (t *Terminal) begin(ctx context.Context) (func(), error) {
	if !t.opts.Interactive {
		return nil, errNotInteractive
	}
	select {
	case <-t.done:
		return nil, errClosed
	default:
	}
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.done:
		return nil, errClosed
	}
	t.startReader.Do(func() { go t.readLoop() })
	return func() { <-t.turn }, nil
}

// readLine returns the next line read at or after since. It returns
// io.EOF when in has ended, ctx.Err() when ctx ends first.
func (t *Terminal) readLine(ctx context.Context, since time.Time) (string, error) {
	for {
		select {
		case l, ok := <-t.lines:
			if !ok {
				return "", t.endOfInput()
			}
			if l.at.Before(since) {
				continue
			}
			return l.text, nil
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.done:
			return "", errClosed
		}
	}
}

// endOfInput says why lines ended. Close closes done before it closes in,
// so when in ended because of Close, done is already closed here — and
// the caller must hear "closed", not a user's end of input.
func (t *Terminal) endOfInput() error {
	select {
	case <-t.done:
		return errClosed
	default:
		return io.EOF
	}
}

// write sends s in one Write, so a question is never split by other
// output between its parts. A terminal that cannot be written to has
// nobody behind it.
func (t *Terminal) write(s string) error {
	if _, err := io.WriteString(t.out, s); err != nil {
		return fmt.Errorf("%w: write to the terminal: %v", approval.ErrNobodyToAsk, err)
	}
	return nil
}

// interrupted tells the user why the question on screen went away.
func (t *Terminal) interrupted(err error) {
	switch {
	case errors.Is(err, io.EOF):
		_ = t.write("\n(end of input: cancelled)\n")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		_ = t.write("\n(no longer needed: the call was cancelled)\n")
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
