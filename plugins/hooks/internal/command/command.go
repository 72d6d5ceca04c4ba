package command

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// Command is the hook. Create it with [New].
type Command struct {
	hook.Base
	logger   hclog.Logger
	settings atomic.Pointer[settings] // nil until a configuration is accepted
}

// Interfaces the plugin implements, checked at compile time.
var (
	_ hook.Hook        = (*Command)(nil)
	_ hook.EventLister = (*Command)(nil)
	_ sdk.Configurer   = (*Command)(nil)
)

// New returns an unconfigured command hook; nil logger discards logs.
func New(logger hclog.Logger) *Command {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Command{logger: logger}
}

// Events lists the events the program is run for. To run it for only one,
// set events in the plugin block.
func (*Command) Events() []hook.Event {
	return []hook.Event{hook.EventPreToolUse, hook.EventPermissionRequest}
}

// ConfigSchema describes the config block (see the package README).
func (*Command) ConfigSchema() sdk.ConfigSchema { return schema() }

// Configure checks and installs the settings; on any error diagnostic the
// previous ones stay in force.
func (c *Command) Configure(_ context.Context, config json.RawMessage) []sdk.Diagnostic {
	var diags configdiag.Set
	if s := compile(config, &diags); s != nil {
		c.settings.Store(s)
		c.logger.Info("command hook configured", "program", s.argv[0], "timeout", s.timeout)
	}
	return diags.List()
}

// PermissionRequest runs the program for a call that needs approval.
func (c *Command) PermissionRequest(ctx context.Context, req hook.Request) (hook.PermissionResult, error) {
	s, run, err := c.prepare(req)
	if err != nil || !run {
		return hook.NoDecision(), err
	}
	res, err := c.invoke(ctx, s, eventPermissionRequest, req)
	if err != nil {
		return hook.PermissionResult{}, err
	}
	if res.exitCode == 2 {
		return hook.Deny(s.redact(strings.TrimSpace(string(res.stderr)))), nil
	}
	if len(strings.TrimSpace(string(res.stdout))) == 0 {
		return hook.NoDecision(), nil
	}
	out, err := permissionResult(res.stdout, s.deniedBy())
	if err != nil {
		return hook.PermissionResult{}, fmt.Errorf("read %s's answer: %w", s.argv[0], err)
	}
	return out, nil
}

// PreToolUse runs the program before a call is approved; it may block the
// call or rewrite its arguments.
func (c *Command) PreToolUse(ctx context.Context, req hook.Request) (hook.PreToolUseResult, error) {
	s, run, err := c.prepare(req)
	if err != nil || !run {
		return hook.Continue(), err
	}
	res, err := c.invoke(ctx, s, eventPreToolUse, req)
	if err != nil {
		return hook.PreToolUseResult{}, err
	}
	if res.exitCode == 2 {
		return hook.Block(s.redact(strings.TrimSpace(string(res.stderr)))), nil
	}
	if len(strings.TrimSpace(string(res.stdout))) == 0 {
		return hook.Continue(), nil
	}
	out, err := preToolUseResult(res.stdout, s.deniedBy())
	if err != nil {
		return hook.PreToolUseResult{}, fmt.Errorf("read %s's answer: %w", s.argv[0], err)
	}
	return out, nil
}

// prepare returns the settings and whether the program runs for req.
func (c *Command) prepare(req hook.Request) (*settings, bool, error) {
	s := c.settings.Load()
	if s == nil {
		return nil, false, sdk.ErrNotConfigured
	}
	if s.matcher != nil && !s.matcher.MatchString(toolName(req)) {
		return s, false, nil
	}
	return s, true, nil
}

// invoke runs the program for event and checks how it exited: 0 and 2 are
// answers, anything else is a failed hook.
func (c *Command) invoke(ctx context.Context, s *settings, event string, req hook.Request) (result, error) {
	stdin, err := buildInput(event, req)
	if err != nil {
		return result{}, err
	}
	res, err := s.run(ctx, stdin, req.Cwd)
	if err != nil {
		c.logger.Warn("hook command failed", "event", event, "call_id", req.CallID, "error", err)
		return result{}, err
	}
	c.logger.Debug("hook command ran", "event", event, "call_id", req.CallID, "tool", toolName(req), "exit_code", res.exitCode)
	switch {
	case res.exitCode == 2 && strings.TrimSpace(string(res.stderr)) == "":
		return result{}, fmt.Errorf("run hook command: %s exited 2 (deny) without a message; print the reason on stderr", s.argv[0])
	case res.exitCode != 0 && res.exitCode != 2:
		return result{}, fmt.Errorf("run hook command: %s exited %d (only 0 and 2 are answers)%s", s.argv[0], res.exitCode, s.excerpt(res.stderr))
	}
	return res, nil
}

// deniedBy is the denial text when the program denies without a reason.
func (s *settings) deniedBy() string {
	return "denied by the hook command " + filepath.Base(s.argv[0])
}

// Name and Version identify the plugin in Info (toolgate plugins shows
// them). The version changes when the plugin's behaviour or config does.
const (
	Name    = "toolgate-hook-command"
	Version = "0.1.0"
)

// Identity names the plugin in Info.
func (*Command) Identity() sdk.Identity { return sdk.Identity{Name: Name, Version: Version} }
