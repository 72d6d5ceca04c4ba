package inbox

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/identity"
)

// Status is where an approval is in its life.
type Status string

const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDenied   Status = "denied"
	StatusExpired  Status = "expired"
	// StatusUsed: the approved call ran; the approval cannot run another.
	StatusUsed Status = "used"
	// StatusWithdrawn: the client gave up on a held call.
	StatusWithdrawn Status = "withdrawn"
)

// Scopes of an approval.
const (
	ScopeOnce    = "once"
	ScopeSession = "session"
)

// Verdict is what one earlier step of the approval chain said about the
// call (a hook that abstained, the Guardian's risk and rationale).
type Verdict struct {
	Step      string `json:"step"`
	By        string `json:"by"`
	Verdict   string `json:"verdict"`
	RiskLevel string `json:"risk_level,omitempty"`
	Rationale string `json:"rationale,omitempty"`
}

// Approval is one held call and its answer.
type Approval struct {
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	SessionID string `json:"session_id"`
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	ModelName string `json:"model_name,omitempty"`
	Title     string `json:"title,omitempty"`
	// Description is the tool's first line of description.
	Description string               `json:"description,omitempty"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// Arguments are the call's arguments with secrets redacted: what an
	// approver sees. The binding covers the real ones.
	Arguments json.RawMessage `json:"arguments"`
	// Definition is the tool's definition hash; DefinitionChanged says
	// the tool changed since an approver last approved it.
	Definition        string              `json:"definition"`
	DefinitionChanged bool                `json:"definition_changed"`
	ApprovalMode      config.ApprovalMode `json:"approval_mode,omitempty"`
	Caller            *identity.Caller    `json:"caller,omitempty"`
	Verdicts          []Verdict           `json:"verdicts,omitempty"`
	// Binding is the hash the approval is bound to (see [Binding]).
	Binding string           `json:"binding"`
	Mode    config.InboxMode `json:"mode"`
	Link    string           `json:"link"`
	Created time.Time        `json:"created"`
	Expires time.Time        `json:"expires"`
	Status  Status           `json:"status"`
	// Choices the approver may give besides deny: "once", and
	// "session" when the approval mode allows remembering.
	Scopes []string `json:"scopes"`
	Answer *Answer  `json:"answer,omitempty"`
	// delivered: the denial was returned to a call made again.
	delivered bool
}

// Answer is an approver's answer.
type Answer struct {
	Approver       string           `json:"approver"`
	ApproverCaller *identity.Caller `json:"approver_caller,omitempty"`
	// Scope is ScopeOnce or ScopeSession for an approval.
	Scope  string    `json:"scope,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// Store keeps approvals. Implementations are safe for concurrent use and
// return copies: a caller never shares an *Approval with the store.
// Update is the one way to change an approval, so that the check and the
// change (pending → approved, approved → used) happen atomically: that
// is what makes an approval single-use.
type Store interface {
	Put(a Approval) error
	Get(id string) (Approval, bool)
	// List returns every approval, oldest first.
	List() []Approval
	// Update applies f to the approval with id under the store's lock
	// and stores the result unless f fails; it returns the result.
	Update(id string, f func(*Approval) error) (Approval, error)
	// Find returns the approvals whose binding is b, oldest first.
	Find(binding string) []Approval
	Delete(id string)
}

// ErrNotFound is returned (wrapped) for an approval id the store does not
// hold.
var ErrNotFound = errors.New("no such approval")

// NewMemoryStore returns the in-process store.
func NewMemoryStore() Store { return &memStore{m: map[string]*Approval{}} }

type memStore struct {
	mu sync.Mutex
	m  map[string]*Approval // guarded by mu
}

func (s *memStore) Put(a Approval) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := a
	s.m[a.ID] = &c
	return nil
}

func (s *memStore) Get(id string) (Approval, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	if !ok {
		return Approval{}, false
	}
	return *a, true
}

func (s *memStore) List() []Approval {
	s.mu.Lock()
	out := make([]Approval, 0, len(s.m))
	for _, a := range s.m {
		out = append(out, *a)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Approval) int { return a.Created.Compare(b.Created) })
	return out
}

func (s *memStore) Update(id string, f func(*Approval) error) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	if !ok {
		return Approval{}, ErrNotFound
	}
	c := *a
	if err := f(&c); err != nil {
		return *a, err
	}
	*a = c
	return c, nil
}

func (s *memStore) Find(binding string) []Approval {
	var out []Approval
	for _, a := range s.List() {
		if a.Binding == binding {
			out = append(out, a)
		}
	}
	return out
}

func (s *memStore) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}
