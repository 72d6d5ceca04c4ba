package approval

import "sync"

// toolKey is a raw route. Struct keys avoid the ambiguity of joined
// strings ("a/b" + "c" vs "a" + "b/c").
type toolKey struct{ server, tool string }

type sessionKey struct {
	session string
	toolKey
}

// memory holds the approvals the user asked the host to remember: per
// session ("Allow for this session"), and process-wide for tools whose
// "Allow and don't ask me again" was written to the config file (the
// running config is not reloaded, so without this the next call would
// ask again).
type memory struct {
	mu      sync.Mutex
	session map[sessionKey]struct{} // guarded by mu
	always  map[toolKey]struct{}    // guarded by mu
}

// remembered says whether the tool is approved for this session, and
// whether that came from a persisted "always".
func (m *memory) remembered(session, server, tool string) (ok, always bool) {
	k := toolKey{server, tool}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, found := m.always[k]; found {
		return true, true
	}
	_, found := m.session[sessionKey{session, k}]
	return found, false
}

func (m *memory) rememberSession(session, server, tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		m.session = make(map[sessionKey]struct{})
	}
	m.session[sessionKey{session, toolKey{server, tool}}] = struct{}{}
}

func (m *memory) rememberAlways(server, tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.always == nil {
		m.always = make(map[toolKey]struct{})
	}
	m.always[toolKey{server, tool}] = struct{}{}
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
