package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// State is what a writer needs to know about an existing ledger file
// before it appends to it.
type State struct {
	Size int64
	// Last is the last complete chained record; zero when there is none.
	Last Link
	// Chained: the last complete line is a chained record, so appending
	// continues its chain. False for an empty file, an old unchained
	// log, or one whose last line is not a record.
	Chained bool
	// Fragment is a cut-short last line (no terminating newline): a host
	// killed mid-write. nil when the file ends in a newline.
	Fragment []byte
	// Started is the "at" of the file's first line, when it has one: the
	// age that audit { rotate { max_age } } measures.
	Started time.Time
}

// chainFields are the parts of a record the chain and its readers need.
type chainFields struct {
	Event string    `json:"event"`
	At    time.Time `json:"at"`
	Seq   *uint64   `json:"seq"`
	Prev  *string   `json:"prev"`
}

// ReadState reads the end (and the first line) of an open ledger file.
func ReadState(f *os.File) (State, error) {
	st, err := f.Stat()
	if err != nil {
		return State{}, err
	}
	s := State{Size: st.Size()}
	if !st.Mode().IsRegular() || s.Size == 0 {
		return s, nil
	}
	// The tail: grow a window back from the end until it holds the last
	// complete line (records can be over a MiB with a large result).
	window := int64(64 << 10)
	var buf []byte
	for {
		if window > s.Size {
			window = s.Size
		}
		buf = make([]byte, window)
		if _, err := f.ReadAt(buf, s.Size-window); err != nil && err != io.EOF {
			return State{}, fmt.Errorf("read the end of the ledger: %w", err)
		}
		end := bytes.LastIndexByte(buf, '\n')
		if end >= 0 && (bytes.LastIndexByte(buf[:end], '\n') >= 0 || window == s.Size) {
			break
		}
		if window == s.Size {
			break // one fragment, no complete line
		}
		window *= 4
	}
	end := bytes.LastIndexByte(buf, '\n')
	if end < len(buf)-1 {
		s.Fragment = append([]byte(nil), buf[end+1:]...)
	}
	if end >= 0 {
		line := buf[bytes.LastIndexByte(buf[:end], '\n')+1 : end]
		var c chainFields
		if json.Unmarshal(line, &c) == nil && c.Seq != nil && c.Prev != nil {
			s.Chained, s.Last = true, Link{Seq: *c.Seq, Hash: Hash(line)}
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err == nil {
		r := bufio.NewReaderSize(io.LimitReader(f, 4<<20), 64<<10)
		if first, err := r.ReadBytes('\n'); err == nil {
			var c chainFields
			if json.Unmarshal(first, &c) == nil {
				s.Started = c.At
			}
		}
	}
	return s, nil
}

// PrefixHash returns the SHA-256 of the first n bytes of f: what a
// ledger_start appended to an old unchained log commits to.
func PrefixHash(f *os.File, n int64) (string, error) {
	h := newHasher()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, n)); err != nil {
		return "", err
	}
	return h.sum(), nil
}
