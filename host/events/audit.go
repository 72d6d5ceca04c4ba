package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/internal/safetext"
)

// AuditSink appends every event as one JSON line to the audit log:
// {"event": <Kind()>, ...the event's own JSON fields}. Event types must
// therefore not have a JSON field named "event".
//
// Each record is encoded in full first and then written with a single
// write(2) on a file opened with O_APPEND. Once Emit returns, the record is
// in the kernel: a panic or SIGKILL of the host cannot lose it, and
// concurrent writers (even other toolgate processes sharing the file) never
// interleave inside a line. The one record being written when the process
// is killed can be cut short (Linux stops a write at a page boundary when a
// fatal signal is pending); its Emit never returned, and the next
// OpenAudit ends that fragment with a newline so later records stay whole
// lines. Readers should skip a line that does not parse. Records are not
// fsynced one by one, so a power loss may lose the last ones; Close syncs.
//
// The file holds tool arguments and results, so it is created with mode
// 0600.
type AuditSink struct {
	path      string
	log       hclog.Logger
	redact    func(string) string // nil: records are written as encoded
	errsCount atomic.Uint64

	mu        sync.Mutex
	f         *os.File // nil once closed
	regular   bool     // a regular file, which Close syncs (devices and pipes cannot be)
	errLogged bool     // the first failure is logged, later ones only counted
	// lastErr is the failure of the latest record, nil once a record
	// is written again (see Writable).
	lastErr error
}

// AuditOption configures OpenAudit.
type AuditOption func(*AuditSink)

// WithAuditLogger sets where the first write failure (and warnings about
// the file) are logged. Without it they are only counted.
func WithAuditLogger(logger hclog.Logger) AuditOption {
	return func(a *AuditSink) {
		if logger != nil {
			a.log = logger
		}
	}
}

// WithAuditRedactor passes every encoded record through redact before it
// is written: the host replaces the secrets its servers were given, so a
// server echoing one, or a model repeating it, leaves no copy on disk.
func WithAuditRedactor(redact func(string) string) AuditOption {
	return func(a *AuditSink) { a.redact = redact }
}

// OpenAudit opens the audit log at path for appending, creating it with
// mode 0600 if missing. If the file ends in a partial line (a host killed
// mid-write, a disk that filled up), a newline is added first so new
// records stay whole lines; the fragment itself is kept, because an audit
// log is never rewritten.
func OpenAudit(path string, opts ...AuditOption) (*AuditSink, error) {
	a := &AuditSink{path: path, log: hclog.NewNullLogger()}
	for _, opt := range opts {
		opt(a)
	}
	a.log = a.log.Named("audit").With("path", path)

	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w; point audit_log at a writable file", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		a.log.Warn("audit log is accessible to other users; it may hold tool arguments and results",
			"mode", st.Mode().Perm().String())
	}
	if st.Mode().IsRegular() && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil && !errors.Is(err, io.EOF) {
			f.Close()
			return nil, fmt.Errorf("open audit log: read its end: %w", err)
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				f.Close()
				return nil, fmt.Errorf("open audit log: end its partial last line: %w", err)
			}
		}
	}
	a.f = f
	a.regular = st.Mode().IsRegular()
	return a, nil
}

// Emit appends e as one line. It never fails loudly: an event that cannot
// be encoded is still recorded by kind with the encoding error, and a write
// failure is counted (WriteErrors) and logged the first time only, so a
// full disk cannot flood the operator log or stop a call.
func (a *AuditSink) Emit(e Event) {
	rec, err := encodeRecord(e)
	if a.redact != nil && err == nil {
		rec = []byte(a.redact(string(rec)))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.failLocked(fmt.Errorf("encode %s event: %w", e.Kind(), err))
	}
	if a.f == nil {
		a.failLocked(fmt.Errorf("write %s event: %w", e.Kind(), os.ErrClosed))
		return
	}
	if _, err := a.f.Write(rec); err != nil {
		a.failLocked(fmt.Errorf("write %s event: %w", e.Kind(), err))
		return
	}
	a.lastErr = nil // written (an encoding failure still leaves a record by kind)
}

// Writable returns nil while the latest record was written, and otherwise
// that record's failure. It is what audit { on_error = "deny" } consults
// before a call runs: the call's own tool_call_begin and approval records
// were emitted just before, so a disk that filled up refuses the next
// call, and one that has room again lets the call after it run.
func (a *AuditSink) Writable() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("audit log %s: %w", a.path, os.ErrClosed)
	}
	if a.lastErr != nil {
		return fmt.Errorf("audit log %s: %w", a.path, a.lastErr)
	}
	return nil
}

func (a *AuditSink) failLocked(err error) {
	a.lastErr = err
	a.errsCount.Add(1)
	if !a.errLogged {
		a.errLogged = true
		a.log.Error("audit log failed; further failures are only counted", "error", err)
	}
}

// WriteErrors is the number of events that could not be recorded intact.
func (a *AuditSink) WriteErrors() uint64 { return a.errsCount.Load() }

// Close syncs and closes the file. Later Emits are counted as failures.
// Closing twice returns nil.
func (a *AuditSink) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	f := a.f
	a.f = nil
	var syncErr error
	if a.regular {
		syncErr = f.Sync()
	}
	if err := errors.Join(syncErr, f.Close()); err != nil {
		return fmt.Errorf("close audit log %s: %w", a.path, err)
	}
	return nil
}

// encodeRecord renders {"event":kind,...fields}\n. A value that cannot be
// marshalled still yields a valid record naming the kind and the error.
func encodeRecord(e Event) ([]byte, error) {
	kind := e.Kind()
	body, err := marshal(e)
	if err != nil {
		fallback, ferr := marshal(struct {
			Event       string `json:"event"`
			EncodeError string `json:"encode_error"`
		}{kind, err.Error()})
		if ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		return append(fallback, '\n'), err
	}
	kindJSON, err := marshal(kind)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(kindJSON) + 12)
	b.WriteString(`{"event":`)
	b.Write(kindJSON)
	switch {
	case len(body) < 2 || body[0] != '{':
		// Not an object (a defined string or slice type): keep it whole.
		b.WriteString(`,"data":`)
		b.Write(body)
		b.WriteByte('}')
	case len(bytes.TrimSpace(body[1:len(body)-1])) == 0:
		b.WriteByte('}')
	default:
		b.WriteByte(',')
		b.Write(body[1:])
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping: the audit log is read by
// people and jq, and "<" in a rationale should stay "<".
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// Server-supplied text may carry U+202E and friends, which
	// encoding/json leaves raw: escape them so the log reads as it is.
	return safetext.JSON(bytes.TrimSuffix(b.Bytes(), []byte{'\n'})), nil
}
