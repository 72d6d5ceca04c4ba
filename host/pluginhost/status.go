package pluginhost

import (
	"fmt"
	"strings"
)

// Checksum states of a plugin block.
const (
	ChecksumNotPinned = "not pinned"
	ChecksumUnchecked = "pinned, not checked yet"
	ChecksumVerified  = "pinned, verified"
	ChecksumMismatch  = "pinned, MISMATCH"
)

// Health states of a plugin process slot.
const (
	HealthNotStarted = "not started"
	HealthStarting   = "starting"
	HealthRunning    = "running"
	HealthExited     = "exited" // crashed; restarted on next use
	HealthFailed     = "failed" // did not start; see Error
	HealthGivenUp    = "given up"
	HealthStopped    = "stopped"
)

// Status describes one plugin block (or one launcher plugin serving an
// environment) as `toolgate plugins` shows it.
type Status struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Environment is set for a launcher process serving that environment.
	Environment string `json:"environment,omitempty"`
	Path        string `json:"path"`

	// From the plugin's Info, once it started.
	PluginName   string   `json:"plugin_name,omitempty"`
	Version      string   `json:"version,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Protocol is the negotiated go-plugin version; APIVersion the
	// negotiated API version of the kind's service.
	Protocol   int    `json:"protocol,omitempty"`
	APIVersion string `json:"api_version,omitempty"`

	// Checksum is one of the Checksum* constants; SHA256 is the pin and
	// ActualSHA256 what the binary had when it was last checked.
	Checksum     string `json:"checksum"`
	SHA256       string `json:"sha256,omitempty"`
	ActualSHA256 string `json:"actual_sha256,omitempty"`

	// Health is one of the Health* constants.
	Health string `json:"health"`
	Pid    int    `json:"pid,omitempty"`
	// Starts counts processes that started (restarts are Starts-1).
	Starts int `json:"starts"`
	// Exit says how the latest process ended.
	Exit string `json:"exit,omitempty"`
	// Error is why the plugin is failed or given up on; Err is the same
	// error, for errors.Is and errors.As (a *ConfigError carries
	// diagnostics to render).
	Error string `json:"error,omitempty"`
	Err   error  `json:"-"`
}

// HealthText is Health with its detail, for a table cell: "running pid
// 4242", "exited: exit status 3", "given up: ...".
func (s Status) HealthText() string {
	switch s.Health {
	case HealthRunning:
		return fmt.Sprintf("running pid %d", s.Pid)
	case HealthExited:
		return "exited: " + s.Exit
	case HealthFailed, HealthGivenUp:
		return s.Health + ": " + oneLine(s.Error)
	}
	return s.Health
}

// ProtocolText is "go-plugin 1, API 1", or "-" before a start.
func (s Status) ProtocolText() string {
	if s.Protocol == 0 {
		return "-"
	}
	return fmt.Sprintf("go-plugin %d, API %s", s.Protocol, s.APIVersion)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (in *instance) status() Status {
	in.mu.Lock()
	defer in.mu.Unlock()
	s := Status{
		Name:   in.block.Name,
		Kind:   string(in.block.Kind),
		Path:   in.block.Path,
		SHA256: in.block.SHA256,
		Starts: in.starts,
		Exit:   in.lastExit,
	}
	if in.env != nil {
		s.Environment = in.env.Name
	}
	switch {
	case in.block.SHA256 == "":
		s.Checksum = ChecksumNotPinned
	case !in.checksum.checked:
		s.Checksum = ChecksumUnchecked
	case in.checksum.mismatch:
		s.Checksum = ChecksumMismatch
		s.ActualSHA256 = in.checksum.actual
	default:
		s.Checksum = ChecksumVerified
		s.ActualSHA256 = in.checksum.actual
	}
	if p := in.last; p != nil {
		s.PluginName, s.Version = p.info.Name, p.info.Version
		s.Capabilities = p.info.Capabilities
		s.Protocol, s.APIVersion = p.protocol, p.api
	}
	switch {
	case in.closed:
		s.Health = HealthStopped
	case in.givenUp:
		s.Health, s.Err = HealthGivenUp, in.failure
	case in.failure != nil:
		s.Health, s.Err = HealthFailed, in.failure
	case in.cur != nil && !isDone(in.cur.ready):
		s.Health = HealthStarting
	case in.cur != nil:
		s.Health, s.Pid = HealthRunning, in.cur.pid
	case in.lastErr != nil:
		s.Health, s.Err = HealthFailed, in.lastErr
	case in.last != nil:
		s.Health = HealthExited
	default:
		s.Health = HealthNotStarted
	}
	if s.Err != nil {
		s.Error = s.Err.Error()
	}
	return s
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
