package ledger

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Break is the first place where a ledger is not intact.
type Break struct {
	File string
	Line int    // 1-based line in File
	Seq  uint64 // the seq of the record at Line, 0 when it has none
	// Reason says what is wrong and what it means.
	Reason string
}

func (b *Break) Error() string {
	seq := ""
	if b.Seq != 0 {
		seq = fmt.Sprintf(" (seq %d)", b.Seq)
	}
	return fmt.Sprintf("%s:%d%s: %s", b.File, b.Line, seq, b.Reason)
}

// Report is the result of Verify.
type Report struct {
	Files       []string // in chain order
	Records     uint64   // chained records checked
	Unchained   int      // records without chain fields (an old log, or its part before the ledger began)
	First, Last Link
	Checkpoints int  // checkpoints seen
	Signed      bool // a key was given and every checkpoint verified with it
	SignedUpTo  uint64
	Closed      bool // the last record is ledger_close
	// Notes say what the verification could not cover.
	Notes []string
	// Break is the first problem; nil when the ledger is intact.
	Break *Break
}

// ErrUnchained is returned by Verify for files without a single chained
// record: an audit log written before the ledger (or one whose chain
// fields were stripped). It can be read but proves nothing.
var ErrUnchained = errors.New("not a chained ledger")

type verifier struct {
	key       ed25519.PublicKey
	rep       *Report
	last      Link
	lastEvent string
	started   bool
	fragment  []byte
	fragLine  int
	// prefix hashes the file's bytes before its chain starts (for a
	// ledger_start appended to an old log).
	prefix  hash.Hash
	prefixN int64
	// unsigned counts records after the last verified checkpoint,
	// leaving out the writer's own closing records.
	unsigned int
}

// Verify checks the chain (and, with key, the checkpoint signatures) of
// the ledger files, in chain order (they are sorted by their first seq,
// so a shell glob will do). It returns a Report whose Break names the
// first broken record; the error is for files that cannot be read and
// for ErrUnchained.
func Verify(files []string, key ed25519.PublicKey) (*Report, error) {
	ordered, err := chainOrder(files)
	if err != nil {
		return nil, err
	}
	v := &verifier{key: key, rep: &Report{Files: ordered}}
	for _, name := range ordered {
		if err := v.file(name); err != nil {
			return nil, err
		}
		if v.rep.Break != nil {
			return v.rep, nil
		}
	}
	r := v.rep
	if !v.started {
		return r, fmt.Errorf("%w: %d record(s) without seq/prev, written before the ledger or stripped of their chain; nothing can be verified", ErrUnchained, r.Unchained)
	}
	r.Last = v.last
	r.Closed = v.lastEvent == KindClose
	if key != nil {
		if r.Checkpoints == 0 {
			r.Break = &Break{File: ordered[len(ordered)-1], Reason: "a key was given but the ledger has no signed checkpoints; was it written with audit { signing } configured?"}
			return r, nil
		}
		r.Signed = true
		if v.unsigned > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("records after seq %d (the last signed checkpoint) are protected by the hash chain only", r.SignedUpTo))
		}
	} else if r.Checkpoints > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d signed checkpoint(s) not checked: pass --key with the public key", r.Checkpoints))
	}
	if !r.Closed && v.lastEvent != KindRotate {
		r.Notes = append(r.Notes, fmt.Sprintf("the ledger does not end with %s: its writer is still running or was killed, or records after seq %d were cut", KindClose, r.Last.Seq))
	}
	return r, nil
}

// chainOrder sorts files by the seq of their first chained record; files
// without one keep their place before the others.
func chainOrder(files []string) ([]string, error) {
	type fs struct {
		name string
		seq  uint64
	}
	var list []fs
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("open ledger file: %w", err)
		}
		seq := uint64(0)
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			var c chainFields
			if json.Unmarshal(line, &c) == nil && c.Seq != nil {
				seq = *c.Seq
				break
			}
			if err != nil {
				break
			}
		}
		f.Close()
		list = append(list, fs{name, seq})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].seq < list[j].seq })
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.name
	}
	return out, nil
}

// extra holds the fields of bookkeeping records the verifier checks.
type extra struct {
	UptoSeq        uint64 `json:"upto_seq"`
	UptoHash       string `json:"upto_hash"`
	KeyID          string `json:"key_id"`
	Sig            string `json:"sig"`
	PrefixBytes    int64  `json:"prefix_bytes"`
	PrefixSHA256   string `json:"prefix_sha256"`
	FragmentSHA256 string `json:"fragment_sha256"`
	Previous       string `json:"previous"`
}

func (v *verifier) file(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("open ledger file: %w", err)
	}
	defer f.Close()
	base := filepath.Base(name)
	r := bufio.NewReaderSize(f, 256<<10)
	v.prefix, v.prefixN = sha256.New(), 0
	brk := func(line int, seq uint64, format string, args ...any) {
		v.rep.Break = &Break{File: name, Line: line, Seq: seq, Reason: fmt.Sprintf(format, args...)}
	}
	firstInFile := true
	for n := 1; ; n++ {
		raw, err := r.ReadBytes('\n')
		if len(raw) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if err == io.EOF { // no newline: cut short
			brk(n, 0, "the last line is cut short (%d bytes, no newline): the tail was truncated, or the writer was killed mid-record and has not reopened the ledger since", len(raw))
			return nil
		}
		line := raw[:len(raw)-1]
		var c chainFields
		isJSON := json.Unmarshal(line, &c) == nil
		if !v.started {
			if !isJSON || c.Seq == nil || c.Prev == nil {
				if isJSON {
					v.rep.Unchained++
				}
				v.prefix.Write(raw)
				v.prefixN += int64(len(raw))
				continue
			}
		}
		switch {
		case !isJSON:
			if v.fragment != nil {
				brk(v.fragLine, 0, "a line that is not a record, not followed by %s: an inserted or damaged line", KindRecovered)
				return nil
			}
			v.fragment, v.fragLine = line, n
			continue
		case c.Seq == nil || c.Prev == nil:
			brk(n, 0, "a record without seq/prev inside the chain: inserted, or its chain fields removed")
			return nil
		}
		seq := *c.Seq
		var x extra
		if c.Event == KindCheckpoint || c.Event == KindStart || c.Event == KindRecovered || c.Event == KindContinue {
			_ = json.Unmarshal(line, &x)
		}
		if v.fragment != nil {
			if c.Event != KindRecovered || x.FragmentSHA256 != Hash(v.fragment) {
				brk(v.fragLine, 0, "a line that is not a record (%d bytes) without a %s record naming it: an inserted or damaged line", len(v.fragment), KindRecovered)
				return nil
			}
			v.fragment = nil
		}
		if !v.started {
			switch {
			case c.Event == KindStart && seq == 1 && *c.Prev == Genesis:
				if x.PrefixBytes != v.prefixN || (v.prefixN > 0 && x.PrefixSHA256 != fmt.Sprintf("%x", v.prefix.Sum(nil))) {
					brk(n, seq, "the %d byte(s) before the ledger began (an older unchained log) were changed: %s commits to %d byte(s) with another hash", v.prefixN, KindStart, x.PrefixBytes)
					return nil
				}
				if v.prefixN > 0 {
					v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("%s: the first %d line(s) predate the ledger (unchained); the ledger_start record commits to their hash", base, n-1))
				}
			case c.Event == KindContinue:
				v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("%s starts at seq %d, continuing %s, which was not given: the link to it is not checked", base, seq, x.Previous))
			default:
				brk(n, seq, "the chain starts at seq %d without a %s or %s record: the records before it are missing", seq, KindStart, KindContinue)
				return nil
			}
			v.started = true
			v.rep.First = Link{Seq: seq, Hash: Hash(line)}
		} else {
			switch {
			case c.Event == KindStart:
				brk(n, seq, "the chain restarts (%s) after seq %d: the ledger was replaced or spliced", KindStart, v.last.Seq)
				return nil
			case seq > v.last.Seq+1:
				brk(n, seq, "seq %d follows seq %d: record(s) %s deleted, or records reordered", seq, v.last.Seq, seqRange(v.last.Seq+1, seq-1))
				return nil
			case seq <= v.last.Seq:
				brk(n, seq, "seq %d follows seq %d: records reordered or duplicated", seq, v.last.Seq)
				return nil
			case *c.Prev != v.last.Hash:
				if firstInFile {
					brk(n, seq, "its prev does not match the hash of seq %d, the last record of the file before: the files do not belong together, or that record was changed", v.last.Seq)
				} else {
					brk(n-1, v.last.Seq, "this record was changed (its hash no longer matches the prev of the record after it)")
				}
				return nil
			}
		}
		if c.Event == KindCheckpoint {
			v.rep.Checkpoints++
			if x.UptoSeq != v.last.Seq || x.UptoHash != v.last.Hash {
				brk(n, seq, "the checkpoint covers seq %d with another hash than the chain has: records before it were changed", x.UptoSeq)
				return nil
			}
			if v.key != nil {
				sig, err := base64.StdEncoding.DecodeString(x.Sig)
				if err != nil || !ed25519.Verify(v.key, checkpointMessage(Link{Seq: x.UptoSeq, Hash: x.UptoHash}), sig) {
					brk(n, seq, "the checkpoint's signature does not verify with the given key (key id %s; the checkpoint names key id %s)", KeyID(v.key), x.KeyID)
					return nil
				}
				v.rep.SignedUpTo = x.UptoSeq
				v.unsigned = 0
			}
		} else if c.Event != KindClose && c.Event != KindRotate && c.Event != KindContinue {
			v.unsigned++
		}
		v.last, v.lastEvent, firstInFile = Link{Seq: seq, Hash: Hash(line)}, c.Event, false
		v.rep.Records++
	}
	if v.fragment != nil {
		brk(v.fragLine, 0, "a line that is not a record (%d bytes) at the end of the file: the tail was damaged", len(v.fragment))
	}
	return nil
}

func seqRange(a, b uint64) string {
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}
