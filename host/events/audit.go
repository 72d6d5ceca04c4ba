package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/ledger"
	"github.com/toolgate/toolgate/internal/filelock"
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
// The file is a ledger (host/ledger): every record carries "seq" and
// "prev", the hash of the record before it, so an edited, deleted,
// reordered or cut record shows (`toolgate audit verify`). Several
// processes may write one ledger (toolgate serve, and a toolgate call on
// the same configuration): each record is written holding a lock beside
// the file (PATH.lock, see lock), after catching up with what the
// others wrote or rotated. With WithLedgerRotation the file moves aside
// when it is too large or old and the next one continues the chain; with
// WithLedgerSigner checkpoints signed with an Ed25519 key are written
// every so many records, at rotation and at Close.
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

	// the ledger
	//
	// lock is PATH.lock, which the writers of one ledger take turns to
	// hold (filelock), so that each chains to the others' last record. It
	// is a file of its own because rotation moves the ledger aside while
	// it is held, and it is never removed, which would let two writers
	// hold locks on two files. nil for a device or pipe, which has no
	// chain to share.
	lock     *os.File
	rotate   LedgerRotation
	signer   *ledger.Signer
	every    int // records between checkpoints
	now      func() time.Time
	link     ledger.Link // after the last record written
	size     int64       // bytes in the current file
	started  time.Time   // when the current file began (max_age)
	uncheck  int         // records since the last checkpoint
	fragment []byte      // a record cut short by a failed write, to be declared
	// opening is the ledger_start, _continue or _recovered record that
	// could not be written when the file was opened: it goes before the
	// next record, so a full disk at startup does not stop the host.
	opening []byte
}

// LedgerRotation says when the ledger moves to a new file; zero fields
// never rotate.
type LedgerRotation struct {
	MaxBytes int64
	MaxAge   time.Duration
}

// WithLedgerRotation rotates the ledger by size or age.
func WithLedgerRotation(r LedgerRotation) AuditOption {
	return func(a *AuditSink) { a.rotate = r }
}

// WithLedgerSigner signs a checkpoint every `every` records (<= 0: 1000),
// at rotation and at Close.
func WithLedgerSigner(s *ledger.Signer, every int) AuditOption {
	return func(a *AuditSink) {
		if every <= 0 {
			every = 1000
		}
		a.signer, a.every = s, every
	}
}

// withClock sets the clock (tests of rotation by age).
func withClock(now func() time.Time) AuditOption {
	return func(a *AuditSink) { a.now = now }
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
	a := &AuditSink{path: path, log: hclog.NewNullLogger(), now: time.Now}
	for _, opt := range opts {
		opt(a)
	}
	a.log = a.log.Named("audit").With("path", path)
	if st, err := os.Stat(path); err != nil || st.Mode().IsRegular() {
		l, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open audit log: its lock file: %w; point audit_log at a file in a writable directory", err)
		}
		a.lock = l
	}
	if err := a.lockLocked(); err != nil {
		a.closeLock()
		return nil, err
	}
	err := a.openLocked("")
	a.unlockLocked()
	if err != nil {
		a.closeLock()
		return nil, err
	}
	return a, nil
}

// lockLocked waits for the ledger's lock; without one (a device or pipe)
// it returns at once.
func (a *AuditSink) lockLocked() error {
	if a.lock == nil {
		return nil
	}
	if err := filelock.Lock(a.lock); err != nil {
		return fmt.Errorf("lock %s: %w", a.lock.Name(), err)
	}
	return nil
}

func (a *AuditSink) unlockLocked() {
	if a.lock != nil {
		_ = filelock.Unlock(a.lock)
	}
}

func (a *AuditSink) closeLock() {
	if a.lock != nil {
		_ = a.lock.Close()
		a.lock = nil
	}
}

// catchUpLocked, holding the ledger's lock, brings this writer up to
// what other processes wrote since its last record: a file moved aside
// by another's rotation is left for the one the path names now, and a
// file that grew is read back for its last link.
func (a *AuditSink) catchUpLocked() error {
	if a.lock == nil {
		return nil
	}
	mine, err := a.f.Stat()
	if err != nil {
		return err
	}
	if mine.Size() == a.size {
		// Nobody wrote since: not even a rotation, which ends the file
		// it moves aside with ledger_rotate.
		return nil
	}
	if now, err := os.Stat(a.path); err != nil || !os.SameFile(now, mine) {
		_ = a.f.Close()
		a.f = nil
		return a.openLocked("")
	}
	state, err := ledger.ReadState(a.f)
	if err != nil {
		return err
	}
	a.size = state.Size
	if state.Chained {
		a.link = state.Last
		// An opening record this writer could not write yet (a full
		// disk) is moot: another writer has begun or continued the
		// chain in this file.
		a.opening = nil
	}
	if state.Fragment != nil && a.fragment == nil {
		// Another writer was killed mid-record: declare its fragment.
		a.fragment = state.Fragment
	}
	return nil
}

// openLocked opens a.path and brings its chain up: a new or unchained
// file gets a ledger_start (committing to any older content), a file
// after rotation a ledger_continue naming the one before (previous), a
// chained file continues, after a ledger_recovered if it ends in a
// fragment.
func (a *AuditSink) openLocked(previous string) error {
	flags := os.O_RDWR | os.O_APPEND | os.O_CREATE
	if previous != "" {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(a.path, flags, 0o600)
	if err != nil {
		return fmt.Errorf("open audit log: %w; point audit_log at a writable file", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open audit log: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		a.log.Warn("audit log is accessible to other users; it may hold tool arguments and results",
			"mode", st.Mode().Perm().String())
	}
	state, err := ledger.ReadState(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("open audit log: %w", err)
	}
	a.f, a.regular, a.size = f, st.Mode().IsRegular(), state.Size
	a.started = state.Started
	if a.started.IsZero() {
		a.started = a.now()
	}
	if state.Fragment != nil {
		// A host killed mid-write: end the fragment so new records stay
		// whole lines. It is kept, because a ledger is never rewritten.
		if err := a.rawWriteLocked([]byte{'\n'}); err != nil {
			f.Close()
			a.f = nil
			return fmt.Errorf("open audit log: end its partial last line: %w", err)
		}
	}
	var opening []byte
	switch {
	case previous != "":
		opening = ledger.Record(ledger.KindContinue, a.now(), map[string]any{"previous": previous})
	case state.Chained:
		a.link = state.Last
		if state.Fragment != nil {
			opening = ledger.Record(ledger.KindRecovered, a.now(), map[string]any{
				"fragment_bytes": len(state.Fragment), "fragment_sha256": ledger.Hash(state.Fragment)})
		}
	default:
		if a.size > 0 {
			a.log.Info("the audit log was written before the ledger; starting the chain after its records")
		}
		fields := map[string]any{"format": ledger.Format, "prefix_bytes": a.size}
		if a.size > 0 {
			h, herr := ledger.PrefixHash(f, a.size)
			if herr != nil {
				f.Close()
				a.f = nil
				return fmt.Errorf("open audit log: read it: %w", herr)
			}
			fields["prefix_sha256"] = h
		}
		a.link = ledger.Link{}
		opening = ledger.Record(ledger.KindStart, a.now(), fields)
	}
	a.opening = opening
	// A device or pipe (/dev/stdout, a log shipper) gets it with the
	// first record: it has no end to read back, and opening it must not
	// count as a write.
	if !a.regular {
		return nil
	}
	if err := a.flushOpeningLocked(); err != nil {
		a.failLocked(fmt.Errorf("start the ledger: %w", err))
	}
	return nil
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
	if rec == nil {
		return
	}
	if err := a.lockLocked(); err != nil {
		a.failLocked(fmt.Errorf("write %s event: %w", e.Kind(), err))
		return
	}
	defer a.unlockLocked()
	if err := a.catchUpLocked(); err != nil {
		a.failLocked(fmt.Errorf("write %s event: catch up with the audit log's other writers: %w", e.Kind(), err))
		if a.f == nil {
			return
		}
	}
	if err := a.rotateIfDueLocked(len(rec)); err != nil {
		a.failLocked(fmt.Errorf("rotate the audit log: %w", err))
		if a.f == nil {
			return
		}
	}
	if err := a.chainWriteLocked(rec); err != nil {
		a.failLocked(fmt.Errorf("write %s event: %w", e.Kind(), err))
		return
	}
	a.lastErr = nil // written (an encoding failure still leaves a record by kind)
	if a.signer != nil {
		a.uncheck++
		if a.uncheck >= a.every {
			if err := a.checkpointLocked(); err != nil {
				a.failLocked(fmt.Errorf("write a ledger checkpoint: %w", err))
			}
		}
	}
}

// chainWriteLocked chains rec to the ledger and writes it with one
// write(2). A record cut short by a failed write is declared by a
// ledger_recovered record before the next one, so the chain goes on.
func (a *AuditSink) chainWriteLocked(rec []byte) error {
	if err := a.flushOpeningLocked(); err != nil {
		return err
	}
	return a.chainWriteOneLocked(rec)
}

func (a *AuditSink) flushOpeningLocked() error {
	if a.opening == nil {
		return nil
	}
	rec := a.opening
	a.opening = nil
	if err := a.chainWriteOneLocked(rec); err != nil {
		if a.fragment == nil {
			a.opening = rec // nothing of it was written: try again
		}
		return err
	}
	return nil
}

func (a *AuditSink) chainWriteOneLocked(rec []byte) error {
	if a.fragment != nil {
		if err := a.rawWriteLocked([]byte{'\n'}); err != nil {
			return err
		}
		frag := a.fragment
		a.fragment = nil
		if err := a.chainWriteOneLocked(ledger.Record(ledger.KindRecovered, a.now(), map[string]any{
			"fragment_bytes": len(frag), "fragment_sha256": ledger.Hash(frag)})); err != nil {
			return err
		}
	}
	line, next, err := ledger.Chain(rec, a.link)
	if err != nil {
		return err
	}
	n, err := a.f.Write(line)
	a.size += int64(n)
	if err != nil {
		if n > 0 {
			a.fragment = append([]byte(nil), line[:n]...)
		}
		return err
	}
	a.link = next
	return nil
}

func (a *AuditSink) rawWriteLocked(b []byte) error {
	n, err := a.f.Write(b)
	a.size += int64(n)
	return err
}

// bookkeepLocked writes one of the ledger's own records.
func (a *AuditSink) bookkeepLocked(kind string, fields map[string]any) error {
	return a.chainWriteLocked(ledger.Record(kind, a.now(), fields))
}

func (a *AuditSink) checkpointLocked() error {
	a.uncheck = 0
	return a.chainWriteLocked(a.signer.Checkpoint(a.now(), a.link))
}

// rotateIfDueLocked moves the file aside when the next record of n bytes
// would make it too large, or it is too old, and opens the next one.
func (a *AuditSink) rotateIfDueLocked(n int) error {
	if !a.regular || a.link.Seq == 0 {
		return nil
	}
	// The chain fields, and the checkpoint and ledger_rotate records that
	// end a file, must fit too.
	const reserve = 100 + 640
	bySize := a.rotate.MaxBytes > 0 && a.size+int64(n)+reserve > a.rotate.MaxBytes
	byAge := a.rotate.MaxAge > 0 && a.now().Sub(a.started) >= a.rotate.MaxAge
	if !bySize && !byAge {
		return nil
	}
	ext := filepath.Ext(a.path)
	stamp := a.now().UTC().Format("20060102T150405.000000000Z")
	rotated := strings.TrimSuffix(a.path, ext) + "-" + stamp + ext
	if a.signer != nil {
		if err := a.checkpointLocked(); err != nil {
			return err
		}
	}
	if err := a.bookkeepLocked(ledger.KindRotate, map[string]any{"rotated_to": filepath.Base(rotated)}); err != nil {
		return err
	}
	if err := a.f.Sync(); err != nil {
		return err
	}
	if err := a.f.Close(); err != nil {
		return err
	}
	a.f = nil
	if err := os.Rename(a.path, rotated); err != nil {
		// Keep the one file: the chain goes on in it.
		if oerr := a.reopenLocked(); oerr != nil {
			return errors.Join(err, oerr)
		}
		return err
	}
	a.log.Info("audit log rotated", "rotated_to", rotated)
	return a.openLocked(filepath.Base(rotated))
}

// reopenLocked opens a.path again for appending, with the chain state
// kept (after a failed rename).
func (a *AuditSink) reopenLocked() error {
	f, err := os.OpenFile(a.path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	a.f = f
	return nil
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
	defer a.closeLock() // after the unlock below: closing drops the lock too
	endErr := a.lockLocked()
	if endErr == nil {
		defer a.unlockLocked()
		endErr = a.catchUpLocked()
	}
	if a.f == nil { // lost in catching up
		return fmt.Errorf("close audit log %s: %w", a.path, endErr)
	}
	if a.regular {
		if a.signer != nil {
			endErr = errors.Join(endErr, a.checkpointLocked())
		}
		endErr = errors.Join(endErr, a.bookkeepLocked(ledger.KindClose, nil))
	}
	f := a.f
	a.f = nil
	syncErr := endErr
	if a.regular {
		syncErr = errors.Join(syncErr, f.Sync())
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
