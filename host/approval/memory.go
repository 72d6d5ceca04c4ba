package approval

import "sync"

// toolKey is a raw route. Struct keys avoid the ambiguity of joined
// strings ("a/b" + "c" vs "a" + "b/c").
type toolKey struct{ server, tool string }

type sessionKey struct {
	session string
	toolKey
}

// memory holds the approvals the user asked the host to remember for a
// session ("Allow for this session"). It outlives configuration reloads:
// a reload must not forget what the user allowed for their session.
type memory struct {
	mu sync.Mutex
	// session maps to the definition hash the user approved: the
	// approval applies only while the tool is unchanged.
	session map[sessionKey]string // guarded by mu
}

// remembered reports the definition hash approved for this session, and
// whether there is one.
func (m *memory) remembered(session, server, tool string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	def, found := m.session[sessionKey{session, toolKey{server, tool}}]
	return def, found
}

func (m *memory) rememberSession(session, server, tool, definition string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		m.session = make(map[sessionKey]string)
	}
	m.session[sessionKey{session, toolKey{server, tool}}] = definition
}

func (m *memory) forgetSession(session string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.session {
		if k.session == session {
			delete(m.session, k)
		}
	}
}

// persisted holds the tools whose "Allow and don't ask me again" was
// written to the config file since the configuration in force was
// loaded: the running config does not have them yet, so without this the
// next call would ask again.
//
// It belongs to one configuration, never to the process: a reload reads
// the file, which from then on is the only record of persistent
// approvals, so an operator who deletes approval_mode = "remembered" and
// reloads revokes it at once. [Procedure.Reconfigured] therefore starts
// with an empty set.
type persisted struct {
	mu    sync.Mutex
	tools map[toolKey]string // definition hash approved; guarded by mu
}

func (a *persisted) get(server, tool string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	def, found := a.tools[toolKey{server, tool}]
	return def, found
}

func (a *persisted) add(server, tool, definition string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tools == nil {
		a.tools = make(map[toolKey]string)
	}
	a.tools[toolKey{server, tool}] = definition
}
