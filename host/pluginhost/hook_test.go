package pluginhost_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/sdk"
)

func sha256File(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestWorkingHooksDecide(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
plugin "deny" {
  kind = "hook"
  path = %q
}
`, bin("hook-allow"), bin("hook-deny")))
	h, rec := newHost(t, cfg, pluginhost.Options{})
	for _, tt := range []struct {
		hook string
		want approval.Decision
	}{
		{"allow", approval.Decision{Approved: true, Step: approval.StepHook, By: "allow"}},
		{"deny", approval.Decision{Step: approval.StepHook, By: "deny", Text: "denied by hook-deny"}},
	} {
		t.Run(tt.hook, func(t *testing.T) {
			proc := approval.New(approval.Options{Hooks: []approval.Hook{hookNamed(t, h, tt.hook)}})
			if diff := cmp.Diff(tt.want, proc.Decide(t.Context(), request)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
	// One process per block, started once, shared by later calls.
	for range 3 {
		if _, err := hookNamed(t, h, "allow").PermissionRequest(t.Context(), request); err != nil {
			t.Fatal(err)
		}
	}
	if got := rec.statuses("allow"); !cmp.Equal(got, []string{events.PluginStarted}) {
		t.Errorf("events of allow = %v, want one start", got)
	}
}

// TestFailingHooksNeverApprove drives every failure mode through a real
// approval procedure, with on_error deny and skip: a failing plugin is a
// denial or is skipped (the user is asked), never an approval, and the
// host keeps serving the healthy plugin next to it.
func TestFailingHooksNeverApprove(t *testing.T) {
	t.Parallel()
	allowSum := sha256File(t, bin("hook-allow"))
	wrongSum := strings.Repeat("0", 64)
	for _, tt := range []struct {
		name  string
		block string // the failing plugin block's body
		is    error
		text  []string // in the error (and so in the denial text)
	}{
		{
			name: "slow",
			block: fmt.Sprintf(`path = %q
  timeout = "300ms"`, bin("hook-slow")),
			is:   context.DeadlineExceeded,
			text: []string{"no answer within 300ms", "raise timeout"},
		},
		{
			name:  "crash",
			block: fmt.Sprintf(`path = %q`, bin("hook-crash")),
			is:    sdk.ErrPluginExited,
			text:  []string{"plugin process exited", "exit status 3", "restarted on next use"},
		},
		{
			name:  "garbage",
			block: fmt.Sprintf(`path = %q`, bin("hook-garbage")),
			is:    sdk.ErrBadResponse,
			text:  []string{"invalid response"},
		},
		{
			name:  "stdout before serve",
			block: fmt.Sprintf(`path = %q`, bin("hook-stdout")),
			is:    pluginhost.ErrHandshake,
			text:  []string{`printed "hook-stdout says hello on stdout" on stdout`, "must write nothing to stdout before Serve"},
		},
		{
			name:  "protocol version mismatch",
			block: fmt.Sprintf(`path = %q`, bin("hook-oldproto")),
			is:    pluginhost.ErrIncompatible,
			text:  []string{"speaks go-plugin protocol version 99", "this host speaks version 1", "no common version"},
		},
		{
			name: "checksum mismatch",
			block: fmt.Sprintf(`path = %q
  sha256 = %q`, bin("hook-allow"), wrongSum),
			is:   pluginhost.ErrChecksumMismatch,
			text: []string{"has sha256 " + allowSum, "expects " + wrongSum, "was not started"},
		},
		{
			name:  "missing binary",
			block: fmt.Sprintf(`path = %q`, bin("no-such-plugin")),
			is:    pluginhost.ErrBinary,
			text:  []string{"does not exist"},
		},
		{
			name:  "wrong kind",
			block: fmt.Sprintf(`path = %q`, bin("launcher-local")),
			is:    pluginhost.ErrIncompatible,
			text:  []string{"the plugin is a launcher, not a hook"},
		},
		{
			name: "refused configuration",
			block: fmt.Sprintf(`path = %q
  config {
    crash_after = 0
  }`, bin("hook-crash")),
			is:   pluginhost.ErrConfig,
			text: []string{"toolgate.hcl:7,19-20: crash_after must be at least 1", `(Reported by plugin "bad".)`},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, onError := range []config.OnError{config.OnErrorDeny, config.OnErrorSkip} {
				cfg := loadConfig(t, fmt.Sprintf(`
plugin "bad" {
  kind     = "hook"
  on_error = %q
  %s
}
plugin "ok" {
  kind = "hook"
  path = %q
}
`, onError, tt.block, bin("hook-allow")))
				h, _ := newHost(t, cfg, pluginhost.Options{})
				bad := hookNamed(t, h, "bad")

				_, err := bad.PermissionRequest(t.Context(), request)
				if !errors.Is(err, tt.is) {
					t.Fatalf("PermissionRequest error = %v, want one matching %v", err, tt.is)
				}
				for _, frag := range tt.text {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("error %q lacks %q", err, frag)
					}
				}

				ask := &asker{}
				d := approval.New(approval.Options{Hooks: []approval.Hook{bad}, Asker: ask}).Decide(t.Context(), request)
				if d.Approved {
					t.Fatalf("on_error = %s: a failing plugin approved the call: %+v", onError, d)
				}
				switch onError {
				case config.OnErrorDeny:
					if d.Step != approval.StepHook || d.By != "bad" || !strings.Contains(d.Text, `permission hook "bad" failed`) {
						t.Errorf("on_error = deny: decision %+v, want a denial by the hook", d)
					}
					if ask.count() != 0 {
						t.Errorf("on_error = deny: the user was asked")
					}
				case config.OnErrorSkip:
					if d.Step != approval.StepUser || ask.count() != 1 {
						t.Errorf("on_error = skip: decision %+v (asked %d times), want the user step", d, ask.count())
					}
				}

				// The host is still up: the healthy plugin answers.
				v, err := hookNamed(t, h, "ok").PermissionRequest(t.Context(), request)
				if err != nil || v.Decision != approval.HookAllow {
					t.Errorf("healthy hook after a failure: %+v, %v", v, err)
				}
			}
		})
	}
}

func TestCrashedHookRestartsOnNextUse(t *testing.T) {
	t.Parallel()
	// crash_after comes through env(): the host decodes the config body
	// with the config's functions.
	cfg := loadConfigEnv(t, fmt.Sprintf(`
plugin "crashy" {
  kind = "hook"
  path = %q
  config {
    crash_after = env("CRASH_AFTER")
  }
}
`, bin("hook-crash")), map[string]string{"CRASH_AFTER": "2"})
	h, rec := newHost(t, cfg, pluginhost.Options{})
	hk := hookNamed(t, h, "crashy")

	if v, err := hk.PermissionRequest(t.Context(), request); err != nil || v.Decision != approval.HookAllow {
		t.Fatalf("first call: %+v, %v", v, err)
	}
	first := h.Status()[0].Pid
	_, err := hk.PermissionRequest(t.Context(), request) // the second call crashes it
	if !errors.Is(err, sdk.ErrPluginExited) {
		t.Fatalf("call during the crash: %v, want sdk.ErrPluginExited", err)
	}
	exited := rec.wait(t, func(e events.PluginState) bool { return e.Status == events.PluginExited })
	if exited.Error != "exit status 3" || exited.Pid != first {
		t.Errorf("exited event = %+v, want exit status 3 of pid %d", exited, first)
	}
	if v, err := hk.PermissionRequest(t.Context(), request); err != nil || v.Decision != approval.HookAllow {
		t.Fatalf("call after the crash: %+v, %v", v, err)
	}
	st := h.Status()[0]
	if st.Health != pluginhost.HealthRunning || st.Pid == first || st.Starts != 2 || st.Exit != "exit status 3" {
		t.Errorf("status after restart = %+v", st)
	}
	if got, want := rec.statuses("crashy"), []string{events.PluginStarted, events.PluginExited, events.PluginStarted}; !cmp.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
}

func TestHookThatKeepsCrashingIsGivenUp(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "crashy" {
  kind = "hook"
  path = %q
}
`, bin("hook-crash")))
	h, rec := newHost(t, cfg, pluginhost.Options{
		Restart: pluginhost.RestartPolicy{Initial: 1e6, Max: 1e6, MaxCrashes: 3},
	})
	hk := hookNamed(t, h, "crashy")
	for i := range 3 {
		if _, err := hk.PermissionRequest(t.Context(), request); !errors.Is(err, sdk.ErrPluginExited) {
			t.Fatalf("call %d: %v, want sdk.ErrPluginExited", i+1, err)
		}
		rec.wait(t, func(e events.PluginState) bool {
			return len(rec.statuses("crashy")) >= 2*(i+1)
		})
	}
	givenUp := rec.wait(t, func(e events.PluginState) bool { return e.Status == events.PluginGivenUp })
	for _, frag := range []string{`plugin "crashy"`, "3 times", "exit status 3", "not restarted until"} {
		if !strings.Contains(givenUp.Error, frag) {
			t.Errorf("given_up event error %q lacks %q", givenUp.Error, frag)
		}
	}
	_, err := hk.PermissionRequest(t.Context(), request)
	if !errors.Is(err, pluginhost.ErrGivenUp) {
		t.Fatalf("call after giving up: %v, want ErrGivenUp", err)
	}
	if st := h.Status()[0]; st.Health != pluginhost.HealthGivenUp || st.Starts != 3 {
		t.Errorf("status = %+v, want given up after 3 starts", st)
	}

	// Applying the configuration again gives it another chance.
	h.Apply(cfg)
	if _, err := hk.PermissionRequest(t.Context(), request); !errors.Is(err, sdk.ErrPluginExited) {
		t.Fatalf("call after Apply: %v, want a fresh process (that crashes again)", err)
	}
}

func TestChecksumPinVerified(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "pinned" {
  kind   = "hook"
  path   = %q
  sha256 = %q
}
`, bin("hook-allow"), sha256File(t, bin("hook-allow"))))
	h, _ := newHost(t, cfg, pluginhost.Options{})
	if got := h.Status()[0].Checksum; got != pluginhost.ChecksumUnchecked {
		t.Errorf("checksum before start = %q", got)
	}
	if _, err := hookNamed(t, h, "pinned").PermissionRequest(t.Context(), request); err != nil {
		t.Fatal(err)
	}
	if got := h.Status()[0].Checksum; got != pluginhost.ChecksumVerified {
		t.Errorf("checksum after start = %q", got)
	}
}

// TestPinnedBinarySwappedAfterVerificationIsNotRun: the sha256 check and
// the exec use the same bytes. The test replaces the pinned file (rename
// over it, as an attacker would) between the check and the start; the
// process that answers must still be the verified binary, which runs
// from a private copy that is removed once the plugin has stopped.
// Not parallel: it sets TMPDIR to see the copy.
func TestPinnedBinarySwappedAfterVerificationIsNotRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pinned-hook")
	copyFile(t, bin("hook-allow"), path)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "pinned" {
  kind   = "hook"
  path   = %q
  sha256 = %q
}
`, path, sha256File(t, path)))
	h := pluginhost.New(cfg, pluginhost.Options{Logger: testLogger(t, hclog.Debug)})
	swapped := false
	pluginhost.SetAfterVerify(h, func(p string) {
		swapped = true
		evil := filepath.Join(dir, "evil")
		copyFile(t, bin("hook-deny"), evil)
		if err := os.Rename(evil, p); err != nil {
			t.Error(err)
		}
	})
	v, err := hookNamed(t, h, "pinned").PermissionRequest(t.Context(), request)
	if !swapped {
		t.Fatal("the swap hook did not run")
	}
	if err != nil || v.Decision != approval.HookAllow {
		t.Fatalf("PermissionRequest = %+v, %v; want allow from the verified binary, not deny from the swapped one", v, err)
	}
	copies, _ := filepath.Glob(filepath.Join(tmp, "toolgate-plugin-*", "pinned-hook"))
	if len(copies) != 1 || sha256File(t, copies[0]) != sha256File(t, bin("hook-allow")) {
		t.Errorf("verified copies = %v, want one with the pinned hash", copies)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "toolgate-plugin-*")); len(left) != 0 {
		t.Errorf("verified copies left after Close: %v", left)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestChecksumMismatchNeverExecutes(t *testing.T) {
	t.Parallel()
	wrong := strings.Repeat("ab", 32)
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "pinned" {
  kind   = "hook"
  path   = %q
  sha256 = %q
}
`, bin("hook-allow"), wrong))
	h, rec := newHost(t, cfg, pluginhost.Options{})
	for range 2 {
		if _, err := hookNamed(t, h, "pinned").PermissionRequest(t.Context(), request); !errors.Is(err, pluginhost.ErrChecksumMismatch) {
			t.Fatalf("got %v", err)
		}
	}
	st := h.Status()[0]
	if st.Checksum != pluginhost.ChecksumMismatch || st.ActualSHA256 != sha256File(t, bin("hook-allow")) || st.Starts != 0 {
		t.Errorf("status = %+v", st)
	}
	// Refused once, not retried: one failed event and no start.
	if got := rec.statuses("pinned"); !cmp.Equal(got, []string{events.PluginFailed}) {
		t.Errorf("events = %v, want one failed", got)
	}
}

func TestHookMatchAndEvents(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "deny-files" {
  kind   = "hook"
  path   = %q
  events = ["PermissionRequest"]
  match {
    server = "fi*"
    tool   = "write_*"
  }
}
plugin "pre-only" {
  kind   = "hook"
  path   = %q
  events = ["PreToolUse"]
}
`, bin("hook-deny"), bin("hook-deny")))
	h, rec := newHost(t, cfg, pluginhost.Options{})
	deny := hookNamed(t, h, "deny-files")
	other := request
	other.Server = "github"
	for _, tt := range []struct {
		name string
		hook *pluginhost.Hook
		r    approval.Request
		want approval.HookDecision
	}{
		{"matching call", deny, request, approval.HookDeny},
		{"other server", deny, other, approval.HookNone},
		{"event not listed", hookNamed(t, h, "pre-only"), request, approval.HookNone},
	} {
		v, err := tt.hook.PermissionRequest(t.Context(), tt.r)
		if err != nil || v.Decision != tt.want {
			t.Errorf("%s: %+v, %v; want %s", tt.name, v, err, tt.want)
		}
	}
	pre, err := hookNamed(t, h, "pre-only").PreToolUse(t.Context(), request)
	if err != nil || pre.Action != approval.PreBlock || pre.Reason != "denied by hook-deny" {
		t.Errorf("PreToolUse = %+v, %v", pre, err)
	}
	if got := rec.statuses("pre-only"); len(got) != 1 {
		t.Errorf("pre-only was started for an event it does not handle: %v", got)
	}
}

// TestHookMatchUsesTheSharedGlobs: match {} uses internal/glob, so "*"
// stays within a "/"-separated segment and "**" crosses it, as in every
// other matcher of the product.
func TestHookMatchUsesTheSharedGlobs(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "one-segment" {
  kind   = "hook"
  path   = %q
  events = ["PermissionRequest"]
  match { tool = "admin/*" }
}
plugin "any-depth" {
  kind   = "hook"
  path   = %q
  events = ["PermissionRequest"]
  match { tool = "admin/**" }
}
`, bin("hook-deny"), bin("hook-deny")))
	h, _ := newHost(t, cfg, pluginhost.Options{})
	for _, tt := range []struct {
		hook, tool string
		want       approval.HookDecision
	}{
		{"one-segment", "admin/reset", approval.HookDeny},
		{"one-segment", "admin/users/reset", approval.HookNone},
		{"any-depth", "admin/users/reset", approval.HookDeny},
	} {
		r := request
		r.Tool = tt.tool
		v, err := hookNamed(t, h, tt.hook).PermissionRequest(t.Context(), r)
		if err != nil || v.Decision != tt.want {
			t.Errorf("%s on %s: %+v, %v; want %s", tt.hook, tt.tool, v, err, tt.want)
		}
	}
}

// TestHookWithABadMatchFails: config.Load rejects a bad glob; a block that
// bypassed it fails every call (on_error applies) instead of silently
// matching nothing, and the plugin is never started for it.
func TestHookWithABadMatchFails(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "bad" {
  kind = "hook"
  path = %q
  match { tool = "write_*" }
}
`, bin("hook-allow")))
	cfg.Plugins[0].Match[0].Tool = "write_["
	h, rec := newHost(t, cfg, pluginhost.Options{})
	v, err := hookNamed(t, h, "bad").PermissionRequest(t.Context(), request)
	if err == nil || !strings.Contains(err.Error(), `"[" has no closing "]"`) {
		t.Errorf("PermissionRequest = %+v, %v; want an error naming the bad pattern", v, err)
	}
	if got := rec.statuses("bad"); len(got) != 0 {
		t.Errorf("the plugin was started: %v", got)
	}
}

// TestHookBlockListingAnUnhandledEventIsRefused: a block whose events list
// names an event the plugin does not declare in its Info is refused when
// the plugin starts, naming the event and the fix; it never answers "no
// decision" silently. A block listing only handled events works.
func TestHookBlockListingAnUnhandledEventIsRefused(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "wrong-events" {
  kind     = "hook"
  path     = %q
  env_vars = ["TOOLGATE_TEST_DENY_EVENTS"]
  events   = ["PreToolUse", "PermissionRequest"]
}
plugin "right-events" {
  kind     = "hook"
  path     = %q
  env_vars = ["TOOLGATE_TEST_DENY_EVENTS"]
  events   = ["PreToolUse"]
}
`, bin("hook-deny"), bin("hook-deny")))
	h, rec := newHost(t, cfg, pluginhost.Options{LookupEnv: func(k string) (string, bool) {
		if k == "TOOLGATE_TEST_DENY_EVENTS" {
			return "pre_tool_use", true // hook-deny then declares only PreToolUse
		}
		return os.LookupEnv(k)
	}})
	v, err := hookNamed(t, h, "wrong-events").PermissionRequest(t.Context(), request)
	if !errors.Is(err, pluginhost.ErrIncompatible) ||
		!strings.Contains(err.Error(), "does not handle PermissionRequest, which events in its block") ||
		!strings.Contains(err.Error(), "it handles PreToolUse") {
		t.Errorf("PermissionRequest = %+v, %v; want the block refused naming the unhandled event", v, err)
	}
	if got := rec.statuses("wrong-events"); !cmp.Equal(got, []string{events.PluginFailed}) {
		t.Errorf("events = %v, want one failed", got)
	}
	pre, err := hookNamed(t, h, "right-events").PreToolUse(t.Context(), request)
	if err != nil || pre.Action != approval.PreBlock {
		t.Errorf("a block listing only handled events: PreToolUse = %+v, %v; want blocked", pre, err)
	}
}

// TestConcurrentFirstUsersShareOneStart: many calls arriving before the
// plugin runs wait on one start, and all get its answer.
func TestConcurrentFirstUsersShareOneStart(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
`, bin("hook-allow")))
	h, rec := newHost(t, cfg, pluginhost.Options{})
	hk := hookNamed(t, h, "allow")
	const n = 16
	errs := make(chan error, n)
	for range n {
		go func() {
			v, err := hk.PermissionRequest(t.Context(), request)
			if err == nil && v.Decision != approval.HookAllow {
				err = fmt.Errorf("decision %s", v.Decision)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := rec.statuses("allow"); !cmp.Equal(got, []string{events.PluginStarted}) {
		t.Errorf("events = %v, want exactly one start", got)
	}
}
