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
	mu      sync.Mutex
	session map[sessionKey]struct{} // guarded by mu
}

// remembered says whether the tool is approved for this session.
func (m *memory) remembered(session, server, tool string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, found := m.session[sessionKey{session, toolKey{server, tool}}]
	return found
}

func (m *memory) rememberSession(session, server, tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		m.session = make(map[sessionKey]struct{})
	}
	m.session[sessionKey{session, toolKey{server, tool}}] = struct{}{}
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
	tools map[toolKey]struct{} // guarded by mu
}

func (a *persisted) has(server, tool string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, found := a.tools[toolKey{server, tool}]
	return found
}

func (a *persisted) add(server, tool string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tools == nil {
		a.tools = make(map[toolKey]struct{})
	}
	a.tools[toolKey{server, tool}] = struct{}{}
}
