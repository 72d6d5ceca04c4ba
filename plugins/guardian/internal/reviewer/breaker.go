package reviewer

import (
	"container/list"
	"fmt"
	"sync"
)

// Circuit-breaker limits, from the Codex Guardian.
const (
	ConsecutiveDenialLimit = 3
	DenialWindow           = 50
	WindowDenialLimit      = 10
)

// maxSessions bounds the sessions the breaker remembers.
const maxSessions = 4096

// breaker tracks denials per session.
type breaker struct {
	mu       sync.Mutex
	sessions map[string]*list.Element // of *sessionRecord
	lru      list.List                // front: most recently reviewed
}

type sessionRecord struct {
	id          string
	consecutive int
	window      [DenialWindow]bool // ring of recent outcomes, true = denied
	next, count int
	open        string // why the circuit opened; "" while closed
}

func newBreaker() *breaker {
	return &breaker{sessions: make(map[string]*list.Element)}
}

// openReason returns why session's circuit is open, or "" when it is closed.
func (b *breaker) openReason(session string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.sessions[session]; ok {
		return e.Value.(*sessionRecord).open
	}
	return ""
}

// record notes one review's outcome and opens the circuit when a limit is
// reached.
func (b *breaker) record(session string, denied bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.session(session)
	r.window[r.next] = denied // overwrites the oldest entry once the window is full
	r.next = (r.next + 1) % DenialWindow
	r.count = min(r.count+1, DenialWindow)
	if !denied {
		r.consecutive = 0
		return
	}
	r.consecutive++
	denials := 0
	for i := range r.count {
		if r.window[i] {
			denials++
		}
	}
	switch {
	case r.open != "":
	case r.consecutive >= ConsecutiveDenialLimit:
		r.open = fmt.Sprintf("%d consecutive denials", r.consecutive)
	case denials >= WindowDenialLimit:
		r.open = fmt.Sprintf("%d denials among the last %d reviews", denials, r.count)
	}
}

// session returns the record of id, creating it and evicting the least
// recently used one when full. b.mu must be held.
func (b *breaker) session(id string) *sessionRecord {
	if e, ok := b.sessions[id]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*sessionRecord)
	}
	if b.lru.Len() >= maxSessions {
		oldest := b.lru.Back()
		b.lru.Remove(oldest)
		delete(b.sessions, oldest.Value.(*sessionRecord).id)
	}
	r := &sessionRecord{id: id}
	b.sessions[id] = b.lru.PushFront(r)
	return r
}
