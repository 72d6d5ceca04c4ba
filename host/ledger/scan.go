package ledger

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/toolgate/toolgate/host/identity"
)

// Entry is one audit record as the query and replay tools read it: the
// fields they filter and group on, and the line itself. Fields a record
// does not have are zero.
type Entry struct {
	File string `json:"-"`
	Line int    `json:"-"`
	Raw  []byte `json:"-"` // the line, without its newline; valid until the callback returns

	Event     string           `json:"event"`
	At        time.Time        `json:"at"`
	Seq       uint64           `json:"seq"`
	CallID    string           `json:"call_id"`
	SessionID string           `json:"session_id"`
	Server    string           `json:"server"`
	Tool      string           `json:"tool"`
	ModelName string           `json:"model_name"`
	Caller    *identity.Caller `json:"caller"`
	Step      string           `json:"step"`
	By        string           `json:"by"`
	Verdict   string           `json:"verdict"`
	Status    string           `json:"status"`
	Rationale string           `json:"rationale"`
	Arguments json.RawMessage  `json:"arguments"`
	// Annotations are the tool's hints on a tool_call_begin, as JSON.
	Annotations json.RawMessage `json:"annotations"`
	// ShadowDecision, Enforced and Differs are set on a shadow_decision:
	// what a shadow hook answered, what the enforced chain decided, and
	// whether they disagree.
	ShadowDecision string `json:"shadow_decision"`
	Enforced       string `json:"enforced"`
	Differs        bool   `json:"differs"`
}

// CallerName is how a caller is shown: email, else subject, else client
// id; "-" when unknown.
func CallerName(c *identity.Caller) string {
	switch {
	case c == nil:
		return "-"
	case c.Email != "":
		return c.Email
	case c.Subject != "":
		return c.Subject
	case c.ClientID != "":
		return c.ClientID
	}
	return "-"
}

// Decision is the entry's verdict as allow, deny or abstain ("" for
// records that decide nothing).
func (e *Entry) Decision() string {
	switch e.Verdict {
	case "approved":
		return "allow"
	case "denied":
		return "deny"
	}
	return e.Verdict
}

// ErrStop ends Scan early without an error.
var ErrStop = errors.New("stop scanning")

// Scan reads the files in order and calls fn for every line that is a
// record; lines that are not (a cut-short write) are skipped. Chained
// and old unchained records are read alike: Scan does not verify (see
// Verify). fn must not keep e.Raw.
func Scan(files []string, fn func(e *Entry) error) error {
	for _, name := range files {
		if err := scanFile(name, fn); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

func scanFile(name string, fn func(e *Entry) error) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("open ledger file: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A record over a MiB (a large result): collect it whole.
			full := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		if len(line) > 0 && err == nil {
			line = line[:len(line)-1]
			var e Entry
			if json.Unmarshal(line, &e) == nil && e.Event != "" {
				e.File, e.Line, e.Raw = name, n, line
				if err := fn(&e); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
}

// IsBookkeeping reports whether kind is one of the ledger's own records.
func IsBookkeeping(kind string) bool { return strings.HasPrefix(kind, "ledger_") }
