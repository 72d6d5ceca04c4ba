package reviewer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// FailedPrefix starts the rationale of every fail-closed denial, as in
// Codex.
const FailedPrefix = "Automatic approval review failed: "

// Options holds what is not configuration.
type Options struct {
	// Logger receives the plugin's logs; nil discards them.
	Logger hclog.Logger
	// HTTPClient is used by the llm engine; nil means its default client.
	HTTPClient *http.Client
	// Backoff is the llm engine's first retry wait; zero means its default.
	// Tests shorten it.
	Backoff time.Duration
}

// Reviewer is the Guardian. Create it with [New].
type Reviewer struct {
	opts    Options
	logger  hclog.Logger
	engine  atomic.Pointer[engineBox] // nil until a configuration is accepted
	breaker *breaker
}

// engineBox lets an interface value live in an atomic.Pointer.
type engineBox struct {
	name string
	engine
}

// Interfaces the plugin implements, checked at compile time.
var (
	_ guardian.Reviewer = (*Reviewer)(nil)
	_ sdk.Configurer    = (*Reviewer)(nil)
)

// New returns an unconfigured Guardian.
func New(opts Options) *Reviewer {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Reviewer{opts: opts, logger: opts.Logger, breaker: newBreaker()}
}

// ConfigSchema describes the config block (see the plugin's README).
func (*Reviewer) ConfigSchema() sdk.ConfigSchema { return schema() }

// Configure checks the configuration and installs the engine it selects;
// on any error diagnostic the previous engine stays.
func (r *Reviewer) Configure(_ context.Context, config json.RawMessage) []sdk.Diagnostic {
	var diags configdiag.Set
	if box := r.compile(config, &diags); box != nil {
		r.engine.Store(box)
		r.logger.Info("guardian configured", "engine", box.name)
	}
	return diags.List()
}

// Review assesses the action. See the package documentation for how errors
// and the circuit breaker turn into denials.
func (r *Reviewer) Review(ctx context.Context, a guardian.Action) (guardian.Verdict, error) {
	box := r.engine.Load()
	if box == nil {
		return guardian.Verdict{}, sdk.ErrNotConfigured
	}
	if why := r.breaker.openReason(a.SessionID); why != "" {
		r.logger.Info("circuit open, denying without review", "session_id", a.SessionID, "call_id", a.CallID)
		return guardian.Verdict{
			Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh, UserAuthorization: guardian.AuthorizationUnknown,
			Rationale: fmt.Sprintf("The automatic reviewer stopped reviewing this session after %s (circuit breaker open); a human must approve further actions.", why),
		}, nil
	}
	v, err := box.Review(ctx, a)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		r.logger.Warn("review did not finish", "engine", box.name, "call_id", a.CallID, "error", err)
		return guardian.Verdict{}, err
	case err != nil:
		r.logger.Warn("review failed, denying", "engine", box.name, "call_id", a.CallID, "error", err)
		v = guardian.Verdict{
			Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh, UserAuthorization: guardian.AuthorizationUnknown,
			Rationale: FailedPrefix + err.Error(),
		}
	}
	r.breaker.record(a.SessionID, v.Outcome == guardian.OutcomeDeny)
	r.logger.Debug("review", "engine", box.name, "call_id", a.CallID, "outcome", v.Outcome, "risk", v.RiskLevel)
	return v, nil
}

// Name and Version identify the plugin in Info (toolgate plugins shows
// them). The version changes when the plugin's behaviour or config does.
const (
	Name    = "toolgate-guardian"
	Version = "0.1.0"
)

// Identity names the plugin in Info.
func (*Reviewer) Identity() sdk.Identity { return sdk.Identity{Name: Name, Version: Version} }
