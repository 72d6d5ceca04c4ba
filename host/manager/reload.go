package manager

import (
	"reflect"
	"slices"
	"time"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// ApplyResult says what Apply did to each server, by name.
type ApplyResult struct {
	Kept      []string // running client and process untouched
	Updated   []string // kept running; settings that need no restart changed
	Restarted []string // connection settings changed: a new client
	Removed   []string // shut down
	Added     []string // started
}

// Apply moves the manager to cfg's server blocks without restarting what
// did not change: a server whose connection settings are the same keeps
// its client and process (its approval modes, filters, timeouts and
// exposure may still change); a changed one restarts; a removed one shuts
// down; an added one starts. envs must resolve cfg's environments.
//
// Apply returns once the changes are under way; added and restarted
// servers report their startup through events like any other.
func (m *Manager) Apply(cfg *config.Config, envs Environments) ApplyResult {
	var res ApplyResult
	var toClose []*mcpclient.Client
	var toStart []*server

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return res
	}
	oldEnvs := m.envConfigs
	m.opts.Environments = envs
	m.envConfigs = envConfigs(cfg)
	if limit := cfg.Exposure.NameLimit; limit != 0 && limit != m.limit {
		m.limit = limit
	}
	m.maxResult = cfg.Serve.MaxResultBytes // new connections take it
	next := map[string]*server{}
	var order []string
	for _, sc := range cfg.Servers {
		order = append(order, sc.Name)
		old, ok := m.servers[sc.Name]
		switch {
		case !ok:
			s := newServer(sc)
			next[sc.Name] = s
			if sc.Enabled {
				toStart = append(toStart, s)
			}
			res.Added = append(res.Added, sc.Name)
		case connectionChanged(old.cfg, sc) || !sameEnvironment(oldEnvs, m.envConfigs, sc.Environment):
			if c := m.retire(old); c != nil {
				toClose = append(toClose, c)
			}
			s := newServer(sc)
			next[sc.Name] = s
			if sc.Enabled {
				toStart = append(toStart, s)
			}
			res.Restarted = append(res.Restarted, sc.Name)
		default:
			refilter := !slices.Equal(old.cfg.EnabledTools, sc.EnabledTools) || (old.cfg.EnabledTools == nil) != (sc.EnabledTools == nil) ||
				!slices.Equal(old.cfg.DisabledTools, sc.DisabledTools) || offerFiltersChanged(old.cfg, sc)
			if reflect.DeepEqual(old.cfg, sc) {
				res.Kept = append(res.Kept, sc.Name)
			} else {
				res.Updated = append(res.Updated, sc.Name)
			}
			old.cfg = sc
			old.filter = serverFilter(sc)
			old.offerFilter = newOfferFilters(sc)
			next[sc.Name] = old
			if refilter && old.status == events.StatusReady {
				// The listing is filtered when it arrives: list again.
				m.scheduleRelist(old, old.gen, 0)
			}
		}
	}
	for _, name := range m.order {
		if _, ok := next[name]; !ok {
			if c := m.retire(m.servers[name]); c != nil {
				toClose = append(toClose, c)
			}
			res.Removed = append(res.Removed, name)
		}
	}
	m.servers, m.order = next, order
	m.bump()
	for _, s := range toStart {
		s.status = events.StatusStarting
	}
	m.mu.Unlock()

	for _, c := range toClose {
		_ = c.Close()
	}
	for _, s := range toStart {
		m.sink.Emit(events.ServerStartup{At: time.Now(), Server: s.name, Status: events.StatusStarting})
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.startServer(m.ctx, s)
		}()
	}
	m.log.Info("configuration applied", "kept", res.Kept, "updated", res.Updated,
		"restarted", res.Restarted, "removed", res.Removed, "added", res.Added)
	return res
}

// retire detaches a server record so none of its goroutines act again,
// and returns its client for the caller to close outside the lock.
// Called with m.mu held.
func (m *Manager) retire(s *server) *mcpclient.Client {
	s.gen++ // callbacks, watchers and restart loops of s now see a stale generation
	s.retired = true
	if s.relisting != nil {
		s.relisting.Stop()
		s.relisting = nil
	}
	c := s.client
	s.client, s.tools = nil, nil
	s.offers = offers{}
	s.status = events.StatusCancelled
	return c
}

// connectionChanged reports whether two server blocks need different
// clients: transport, process, credentials or protocol. Approval modes,
// filters, tool timeouts, exposure and naming do not restart anything.
func connectionChanged(a, b config.Server) bool {
	key := func(s config.Server) config.Server {
		// Sampling is declared at initialize: a change reconnects.
		sampling := s.OffersSampling()
		return config.Server{
			Name: s.Name, Transport: s.Transport,
			Command: s.Command, Args: s.Args, Env: s.Env, EnvVars: s.EnvVars, Cwd: s.Cwd,
			URL: s.URL, BearerTokenEnvVar: s.BearerTokenEnvVar, HTTPHeaders: s.HTTPHeaders,
			EnvHTTPHeaders: s.EnvHTTPHeaders, OAuth: s.OAuth,
			Enabled: s.Enabled, ProtocolVersion: s.ProtocolVersion, Environment: s.Environment,
			ForwardSampling: &sampling,
		}
	}
	return !key(a).SameProjection(key(b))
}

// envConfigs indexes cfg's environment blocks by name.
func envConfigs(cfg *config.Config) map[string]config.Environment {
	out := map[string]config.Environment{}
	for _, e := range cfg.Environments {
		out[e.Name] = e
	}
	return out
}

// sameEnvironment reports whether the environment a server runs in kept
// its projection (a changed launcher or its config restarts the server).
func sameEnvironment(old, cur map[string]config.Environment, name string) bool {
	o, ok1 := old[name]
	n, ok2 := cur[name]
	if ok1 != ok2 {
		return false
	}
	return !ok1 || o.SameProjection(n)
}

// Names returns the server names in config order.
func (m *Manager) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.order)
}
