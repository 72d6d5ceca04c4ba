package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"strconv"
)

// Bookkeeping record kinds (the "event" field) the writer adds.
const (
	KindStart      = "ledger_start"      // first record of a new ledger (seq 1)
	KindContinue   = "ledger_continue"   // first record of a file after rotation
	KindRecovered  = "ledger_recovered"  // follows a cut-short line (a crash or a failed write)
	KindCheckpoint = "ledger_checkpoint" // a signed statement of the chain so far
	KindRotate     = "ledger_rotate"     // last record of a file that was rotated away
	KindClose      = "ledger_close"      // last record written when the writer closes
)

// Format is the ledger format version written in ledger_start.
const Format = 1

// Genesis is the prev of seq 1.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Link is the position of the chain after a record: its seq and hash.
// The zero Link is the state before seq 1.
type Link struct {
	Seq  uint64
	Hash string // hex SHA-256 of the record's line; "" before seq 1
}

// prevHash is what the next record's prev field holds.
func (l Link) prevHash() string {
	if l.Hash == "" {
		return Genesis
	}
	return l.Hash
}

// Hash returns the hex SHA-256 of a line (without its newline).
func Hash(line []byte) string {
	sum := sha256.Sum256(bytes.TrimSuffix(line, []byte{'\n'}))
	return hex.EncodeToString(sum[:])
}

// ErrNotObject is returned by Chain for a record that is not one JSON
// object on one line.
var ErrNotObject = errors.New("ledger record is not a one-line JSON object")

// Chain appends the chain fields to rec, a one-line JSON object ending in
// "}\n", and returns the chained line (with its newline) and the link
// after it. rec must not already hold "seq" or "prev" fields.
func Chain(rec []byte, after Link) ([]byte, Link, error) {
	body := bytes.TrimSuffix(rec, []byte{'\n'})
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' || bytes.IndexByte(body, '\n') >= 0 {
		return nil, after, ErrNotObject
	}
	seq := after.Seq + 1
	out := make([]byte, 0, len(body)+100)
	out = append(out, body[:len(body)-1]...)
	if len(bytes.TrimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"seq":`...)
	out = strconv.AppendUint(out, seq, 10)
	out = append(out, `,"prev":"`...)
	out = append(out, after.prevHash()...)
	out = append(out, `"}`...)
	next := Link{Seq: seq, Hash: Hash(out)}
	return append(out, '\n'), next, nil
}

type hasher struct{ h hash.Hash }

func newHasher() *hasher                      { return &hasher{sha256.New()} }
func (h *hasher) Write(p []byte) (int, error) { return h.h.Write(p) }
func (h *hasher) sum() string                 { return hex.EncodeToString(h.h.Sum(nil)) }
