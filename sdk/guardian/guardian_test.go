package guardian_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

type reviewFunc func(context.Context, guardian.Action) (guardian.Verdict, error)

func (f reviewFunc) Review(ctx context.Context, a guardian.Action) (guardian.Verdict, error) {
	return f(ctx, a)
}

func ptr[T any](v T) *T { return &v }

var fullAction = guardian.Action{
	Server:          "files",
	Tool:            "delete_file",
	Arguments:       json.RawMessage(`{"path":"/etc/passwd"}`),
	Annotations:     &sdk.Annotations{Destructive: ptr(true), OpenWorld: ptr(false), Title: "Delete"},
	ToolTitle:       "Delete a file",
	ToolDescription: "Deletes a file.",
	History: []guardian.HistoryEntry{
		{Server: "files", Tool: "read_file", Arguments: json.RawMessage(`{"path":"a"}`), Outcome: "completed"},
		{Server: "web", Tool: "fetch", Arguments: json.RawMessage(`{"url":"x"}`), Outcome: "denied"},
	},
	SessionID: "s-1",
	CallID:    "c-9",
	Caller:    &sdk.Caller{Subject: "bob", Groups: []string{"dev", "ops"}, ClientID: "cli"},
}

func TestReviewRoundTrip(t *testing.T) {
	for _, want := range []guardian.Verdict{
		{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskCritical, UserAuthorization: guardian.AuthorizationLow, Rationale: "deletes system files"},
		{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskLow, UserAuthorization: guardian.AuthorizationHigh, Rationale: "asked for"},
		{Outcome: guardian.OutcomeAllow}, // risk and authorization not said
	} {
		t.Run(want.Outcome.String()+"/"+want.RiskLevel.String(), func(t *testing.T) {
			seen := make(chan guardian.Action, 1)
			g := plugintest.Guardian(t, reviewFunc(func(_ context.Context, a guardian.Action) (guardian.Verdict, error) {
				seen <- a
				return want, nil
			}))
			got, err := g.Review(t.Context(), fullAction)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(fullAction, <-seen); diff != "" {
				t.Errorf("action the plugin saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeadlineAndCancellationReachPlugin(t *testing.T) {
	deadlines := make(chan time.Time, 1)
	g := plugintest.Guardian(t, reviewFunc(func(ctx context.Context, _ guardian.Action) (guardian.Verdict, error) {
		d, _ := ctx.Deadline()
		deadlines <- d
		<-ctx.Done()
		return guardian.Verdict{}, ctx.Err()
	}))
	want := time.Now().Add(200 * time.Millisecond)
	ctx, cancel := context.WithDeadline(t.Context(), want)
	defer cancel()
	if _, err := g.Review(ctx, fullAction); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want context.DeadlineExceeded", err)
	}
	if d := (<-deadlines).Sub(want); d > time.Second || d < -time.Second {
		t.Errorf("plugin's deadline is %v away from the host's", d)
	}

	started := make(chan struct{})
	pluginErr := make(chan error, 1)
	g = plugintest.Guardian(t, reviewFunc(func(ctx context.Context, _ guardian.Action) (guardian.Verdict, error) {
		close(started)
		<-ctx.Done()
		pluginErr <- ctx.Err()
		return guardian.Verdict{}, ctx.Err()
	}))
	ctx, cancel = context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	if _, err := g.Review(ctx, fullAction); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if err := <-pluginErr; !errors.Is(err, context.Canceled) {
		t.Errorf("plugin's ctx ended with %v, want context.Canceled", err)
	}
}

func TestReviewErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		review  reviewFunc
		wantIs  error
		wantMsg string
	}{
		{"no outcome", func(context.Context, guardian.Action) (guardian.Verdict, error) {
			return guardian.Verdict{Rationale: "forgot"}, nil
		}, sdk.ErrBadResponse, ""},
		{"unknown outcome", func(context.Context, guardian.Action) (guardian.Verdict, error) {
			return guardian.Verdict{Outcome: 7}, nil
		}, sdk.ErrBadResponse, ""},
		{"plugin error", func(context.Context, guardian.Action) (guardian.Verdict, error) {
			return guardian.Verdict{}, errors.New("model endpoint unreachable")
		}, nil, "model endpoint unreachable"},
		{"not configured", func(context.Context, guardian.Action) (guardian.Verdict, error) {
			return guardian.Verdict{}, sdk.ErrNotConfigured
		}, sdk.ErrNotConfigured, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plugintest.Guardian(t, tt.review).Review(t.Context(), fullAction)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) {
					t.Errorf("got %v, want %v", err, tt.wantIs)
				}
				return
			}
			var pe *sdk.PluginError
			if !errors.As(err, &pe) || pe.Msg != tt.wantMsg {
				t.Errorf("got %v, want *sdk.PluginError{%q}", err, tt.wantMsg)
			}
		})
	}
}

func TestPluginExitMidReviewIsErrPluginExited(t *testing.T) {
	inCall := make(chan struct{})
	release := make(chan struct{})
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		impl := reviewFunc(func(ctx context.Context, _ guardian.Action) (guardian.Verdict, error) {
			close(inCall)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return guardian.Verdict{Outcome: guardian.OutcomeAllow}, nil
		})
		if err := (&guardian.GRPCPlugin{Impl: impl}).GRPCServer(nil, s); err != nil {
			t.Fatal(err)
		}
	})
	defer close(release)
	defer server.Stop()
	defer conn.Close()
	exited, markExited := context.WithCancel(context.Background())
	defer markExited()
	g := guardian.NewClient(conn, exited)
	go func() {
		<-inCall
		server.Stop()
		markExited()
	}()
	if _, err := g.Review(t.Context(), fullAction); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("got %v, want sdk.ErrPluginExited", err)
	}
}

// configured is a Guardian with a config schema.
type configured struct{ reviewFunc }

func (configured) ConfigSchema() sdk.ConfigSchema {
	return sdk.ConfigSchema{Attributes: []sdk.Attribute{{Name: "threshold", Type: sdk.TypeNumber, Required: true}}}
}

func (configured) Configure(_ context.Context, raw json.RawMessage) []sdk.Diagnostic {
	var cfg struct{ Threshold *float64 }
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.Threshold == nil || *cfg.Threshold > 1 {
		return []sdk.Diagnostic{{Summary: "threshold must be between 0 and 1", AttributePath: []string{"threshold"}}}
	}
	return nil
}

func TestInfoAndConfigure(t *testing.T) {
	g := plugintest.Guardian(t, configured{})
	info, err := g.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != sdk.KindGuardian || !info.Has(guardian.CapabilityReview) || !info.Has(sdk.CapabilityConfigure) ||
		info.ConfigSchema == nil || info.ConfigSchema.Attributes[0].Name != "threshold" {
		t.Errorf("Info = %+v", info)
	}
	diags, err := g.Configure(t.Context(), json.RawMessage(`{"threshold":3}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []sdk.Diagnostic{{Severity: sdk.SeverityError, Summary: "threshold must be between 0 and 1", AttributePath: []string{"threshold"}}}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}
