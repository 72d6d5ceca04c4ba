package manager

import (
	"context"
	"errors"
	"time"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/internal/backoff"
)

// watch waits for a ready client's session to end. An end the manager did
// not ask for is a crash: the server is marked failed, its tools leave the
// catalog, and a restart is scheduled.
func (m *Manager) watch(s *server, c *mcpclient.Client, gen int) {
	defer m.wg.Done()
	select {
	case <-c.Done():
	case <-m.ctx.Done():
		return // Close closes the client
	}
	err := c.Err()
	m.mu.Lock()
	if m.closed || s.gen != gen || err == nil {
		m.mu.Unlock()
		return
	}
	s.status, s.err, s.tools, s.client = events.StatusFailed, err, nil, nil
	s.offers = offers{}
	if s.relisting != nil {
		s.relisting.Stop()
		s.relisting = nil
	}
	if time.Since(s.readyAt) >= m.opts.Restart.StableAfter {
		s.crashes = 0 // it had recovered: this crash starts a new count
	}
	s.crashes++
	m.bump()
	rev, restarts, crashes := m.revision, s.restarts, s.crashes
	m.mu.Unlock()

	if crashes > 1 {
		m.log.Error("server stopped again soon after a restart (crash loop)", "server", s.name, "crashes_in_a_row", crashes, "error", err)
	} else {
		m.log.Error("server stopped", "server", s.name, "error", err)
	}
	m.sink.Emit(events.ServerState{At: time.Now(), Server: s.name, Status: events.StatusFailed,
		Error: err.Error(), Restarts: restarts, Revision: rev})
	_ = c.Close()
	if !m.opts.Restart.Disabled {
		m.restartLoop(s, crashes, false)
	}
}

// retryStartup retries a server whose first start failed, with the
// crash-restart backoff, until it is ready or the manager closes. Without
// it a server that was slow or briefly broken at startup stayed failed
// until a reload, while one that crashed later came back by itself.
// Called with m.mu held.
func (m *Manager) retryStartup(s *server) {
	if m.opts.Restart.Disabled || !s.cfg.RetryStartup || m.closed || s.retired {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.restartLoop(s, 1, true)
	}()
}

// restartLoop reconnects s with capped exponential backoff until it is
// ready again or the manager closes. It runs on the watch goroutine
// (crashes) or its own (startup, see retryStartup). The
// backoff goes on from where the last restart left it while the server
// is in a crash loop (crashes in a row, see RestartPolicy.StableAfter),
// so a server that dies right after each start is not restarted at the
// first delay for ever.
func (m *Manager) restartLoop(s *server, crashes int, startup bool) {
	policy := backoff.Policy{Initial: m.opts.Restart.Initial, Max: m.opts.Restart.Max}
	delay := policy.Delay(crashes)
	for attempt := crashes; ; attempt++ {
		if backoff.Sleep(m.ctx, delay) != nil {
			return
		}
		m.mu.Lock()
		retired := s.retired
		m.mu.Unlock()
		if retired {
			return
		}
		if startup {
			m.mu.Lock()
			s.startupRetries++
			m.mu.Unlock()
		}
		c, err := m.connect(m.ctx, s)
		m.mu.Lock()
		if m.closed || s.retired {
			m.mu.Unlock()
			if c != nil {
				_ = c.client.Close()
			}
			return
		}
		if err == nil {
			if !startup {
				s.restarts++
			}
			m.becomeReady(s, c)
			rev, restarts, tools, retries := m.revision, s.restarts, len(s.tools), s.startupRetries
			m.mu.Unlock()
			if startup {
				m.log.Info("server started after retrying", "server", s.name, "startup_retries", retries, "tools", tools)
			} else {
				m.log.Info("server restarted", "server", s.name, "restarts", restarts, "tools", tools)
			}
			m.sink.Emit(events.ServerState{At: time.Now(), Server: s.name, Status: events.StatusReady,
				Restarts: restarts, Revision: rev})
			return
		}
		s.err = err
		m.mu.Unlock()
		delay = policy.Delay(attempt + 1)
		if startup {
			m.log.Warn("server still fails to start", "server", s.name, "error", err, "retry_in", delay)
		} else {
			m.log.Warn("server restart failed", "server", s.name, "error", err, "retry_in", delay)
		}
	}
}

// toolsChanged handles notifications/tools/list_changed from generation
// gen of s: during startup it is counted (connect lists again); once ready
// it schedules one debounced re-list.
func (m *Manager) toolsChanged(s *server, gen int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || s.gen != gen {
		return
	}
	s.changes++
	if s.status != events.StatusReady {
		return
	}
	m.scheduleRelist(s, gen, m.opts.RelistDelay)
}

// scheduleRelist lists s's tools again after delay, coalescing requests
// that arrive meanwhile. Each request restarts the delay, but never past
// RelistMaxWait after the first one: a server announcing changes without
// pause is still re-listed. One relist runs at a time; a request due
// while one runs makes it run once more. Called with m.mu held.
func (m *Manager) scheduleRelist(s *server, gen int, delay time.Duration) {
	now := time.Now()
	if s.relisting != nil {
		s.relisting.Reset(max(0, min(delay, s.relistBy.Sub(now))))
		return
	}
	s.relistBy = now.Add(m.opts.RelistMaxWait)
	s.relisting = time.AfterFunc(delay, func() {
		m.mu.Lock()
		if m.closed || s.gen != gen {
			m.mu.Unlock()
			return
		}
		s.relisting = nil
		if s.listing {
			s.listAgain = true
			m.mu.Unlock()
			return
		}
		s.listing = true
		m.wg.Add(1)
		m.mu.Unlock()
		defer m.wg.Done()
		for g := gen; ; {
			m.relist(s, g)
			m.mu.Lock()
			// listAgain is only set by a request of the current client,
			// which may be newer than the one just listed.
			again := s.listAgain && !m.closed
			s.listAgain, s.listing, g = false, again, s.gen
			m.mu.Unlock()
			if !again {
				return
			}
		}
	})
}

// relist refreshes the tools of a ready server after a list change.
func (m *Manager) relist(s *server, gen int) {
	m.mu.Lock()
	c, timeout := s.client, s.cfg.StartupTimeout
	m.mu.Unlock()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, timeout)
	defer cancel()
	tools, degraded, err := m.listTools(ctx, c)
	if err != nil {
		m.warns.Warn(m.log, "re-listing tools failed; keeping the previous list", "server", s.name, "error", err)
		return
	}
	if degraded != nil {
		m.warns.Warn(m.log, "server degraded", "server", s.name, "reason", degraded)
	}
	tools = m.filterTools(s, tools)
	o, odeg := m.listOffers(ctx, s, c)
	degraded = errors.Join(degraded, odeg)
	m.mu.Lock()
	if m.closed || s.gen != gen {
		m.mu.Unlock()
		return
	}
	s.tools, s.offers, s.degraded = tools, o, degraded
	m.bump()
	rev := m.revision
	m.mu.Unlock()
	m.log.Info("tool list changed", "server", s.name, "tools", len(tools), "revision", rev)
	m.sink.Emit(events.ServerState{At: time.Now(), Server: s.name, Status: events.StatusReady, Revision: rev})
}
