package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// testGuardians are served by this test binary when it runs under one of
// these names (see TestMain and guardianBinary).
var testGuardians = map[string]guardian.Reviewer{
	"guardian-allow":      reviewFunc(allowReadOnly),
	"guardian-slow":       reviewFunc(waitForDeadline),
	"guardian-no-outcome": reviewFunc(func(context.Context, guardian.Action) (guardian.Verdict, error) { return guardian.Verdict{}, nil }),
	"guardian-by-caller":  reviewFunc(allowAdmins),
}

// allowAdmins decides by who calls: the caller must reach the Guardian.
func allowAdmins(_ context.Context, a guardian.Action) (guardian.Verdict, error) {
	if a.Caller != nil && slices.Contains(a.Caller.Groups, "admins") {
		return guardian.Verdict{Outcome: guardian.OutcomeAllow, Rationale: a.Caller.Subject + " is an admin"}, nil
	}
	who := "an unknown caller"
	if a.Caller != nil {
		who = a.Caller.Subject + " (" + a.Caller.Email + ")"
	}
	return guardian.Verdict{Outcome: guardian.OutcomeDeny, Rationale: who + " is not an admin"}, nil
}

type reviewFunc func(context.Context, guardian.Action) (guardian.Verdict, error)

func (f reviewFunc) Review(ctx context.Context, a guardian.Action) (guardian.Verdict, error) {
	return f(ctx, a)
}

func allowReadOnly(_ context.Context, a guardian.Action) (guardian.Verdict, error) {
	if a.Tool == "read_file" {
		return guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskLow, Rationale: "only reads"}, nil
	}
	return guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh,
		Rationale: fmt.Sprintf("%s/%s with %s writes", a.Server, a.Tool, a.Arguments)}, nil
}

func waitForDeadline(ctx context.Context, _ guardian.Action) (guardian.Verdict, error) {
	<-ctx.Done()
	return guardian.Verdict{}, ctx.Err()
}

// guardianBinary links this test binary under a test Guardian's name.
func guardianBinary(t *testing.T, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func guardianProcedure(t *testing.T, name, timeout string) (*approval.Procedure, *pluginhost.Plugins) {
	t.Helper()
	cfg := loadConfig(t, fmt.Sprintf(`
approval {
  policy   = "on-request"
  reviewer = "guardian"
}
plugin "reviewer" {
  kind    = "guardian"
  path    = %q
  timeout = %q
}
`, guardianBinary(t, name), timeout))
	h, _ := newHost(t, cfg, pluginhost.Options{})
	return approval.New(approval.Options{Approval: cfg.Approval, Reviewer: h.Reviewer()}), h
}

func TestGuardianReviews(t *testing.T) {
	t.Parallel()
	proc, _ := guardianProcedure(t, "guardian-allow", "20s")
	read := request
	read.Tool = "read_file"
	if d := proc.Decide(t.Context(), read); !d.Approved || d.Step != approval.StepReviewer || d.By != "reviewer" {
		t.Errorf("read_file: %+v, want approved by the guardian", d)
	}
	d := proc.Decide(t.Context(), request)
	if d.Approved || !strings.Contains(d.Text, `files/write_file with {"path":"a"} writes`) {
		t.Errorf("write_file: %+v, want denied with the guardian's rationale", d)
	}
}

func TestGuardianSeesTheCaller(t *testing.T) {
	t.Parallel()
	proc, _ := guardianProcedure(t, "guardian-by-caller", "20s")
	admin := request
	admin.Caller = &identity.Caller{Subject: "alice", Groups: []string{"dev", "admins"}}
	if d := proc.Decide(t.Context(), admin); !d.Approved {
		t.Errorf("alice: %+v, want approved", d)
	}
	dev := request
	dev.Caller = &identity.Caller{Subject: "bob", Email: "bob@example.com", Groups: []string{"dev"}}
	if d := proc.Decide(t.Context(), dev); d.Approved || !strings.Contains(d.Text, "bob (bob@example.com) is not an admin") {
		t.Errorf("bob: %+v, want denied naming him", d)
	}
	if d := proc.Decide(t.Context(), request); d.Approved || !strings.Contains(d.Text, "an unknown caller") {
		t.Errorf("no caller: %+v", d)
	}
}

func TestFailingGuardianDenies(t *testing.T) {
	t.Parallel()
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		proc, h := guardianProcedure(t, "guardian-slow", "300ms")
		_, err := h.Reviewer().Review(t.Context(), request)
		if !errors.Is(err, approval.ErrReviewTimeout) || !strings.Contains(err.Error(), "no answer within 300ms") {
			t.Errorf("Review = %v, want approval.ErrReviewTimeout", err)
		}
		if d := proc.Decide(t.Context(), request); d.Approved || d.Text != approval.TextReviewTimeout {
			t.Errorf("Decide = %+v, want the review-timeout denial", d)
		}
	})
	t.Run("no outcome", func(t *testing.T) {
		t.Parallel()
		proc, _ := guardianProcedure(t, "guardian-no-outcome", "20s")
		if d := proc.Decide(t.Context(), request); d.Approved || !strings.Contains(d.Text, "Automatic approval review failed") {
			t.Errorf("Decide = %+v, want a failed review", d)
		}
	})
	t.Run("not a guardian", func(t *testing.T) {
		t.Parallel()
		cfg := loadConfig(t, fmt.Sprintf(`
plugin "reviewer" {
  kind = "guardian"
  path = %q
}
`, bin("hook-allow")))
		h, _ := newHost(t, cfg, pluginhost.Options{})
		d := approval.New(approval.Options{
			Approval: config.Approval{Policy: config.PolicyOnRequest, Reviewer: config.ReviewerGuardian},
			Reviewer: h.Reviewer(),
		}).Decide(t.Context(), request)
		if d.Approved || !strings.Contains(d.Text, "the plugin is a hook, not a guardian") {
			t.Errorf("Decide = %+v, want a failed review naming the kind mismatch", d)
		}
	})
}
