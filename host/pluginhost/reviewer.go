package pluginhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// Reviewer adapts a guardian plugin block to approval.Reviewer. The
// block's timeout bounds each review (the wait for the plugin to start
// included); running out of it returns an error wrapping
// approval.ErrReviewTimeout. Any other failure is an error, which the
// procedure turns into a denial.
//
// A Reviewer is safe for concurrent use.
type Reviewer struct {
	in    *instance
	block config.Plugin
}

var _ approval.Reviewer = (*Reviewer)(nil)

func newReviewer(in *instance, p config.Plugin) *Reviewer {
	return &Reviewer{in: in, block: p}
}

// Name is the plugin block's name.
func (r *Reviewer) Name() string { return r.block.Name }

// Review asks the Guardian about one call.
func (r *Reviewer) Review(ctx context.Context, req approval.Request) (approval.Assessment, error) {
	ctx, cancel, timeout := bound(ctx, callTimeout(r.block))
	defer cancel()
	p, err := r.in.acquire(ctx)
	if err != nil {
		return approval.Assessment{}, r.failed(timeout, nil, err)
	}
	c, ok := p.plugin.(*guardian.Client)
	if !ok {
		return approval.Assessment{}, fmt.Errorf("%w: plugin %q is not a guardian (got %T)", ErrIncompatible, r.block.Name, p.plugin)
	}
	v, err := c.Review(ctx, guardian.Action{
		Server:          req.Server,
		Tool:            req.Tool,
		Arguments:       hookRequest(req, "", "").Arguments,
		Annotations:     annotations(req.Annotations),
		ToolTitle:       req.Title,
		ToolDescription: req.Description,
		SessionID:       req.SessionID,
		CallID:          req.CallID,
		Caller:          sdkCaller(req.Caller),
	})
	if err != nil {
		return approval.Assessment{}, r.failed(timeout, p, err)
	}
	a := approval.Assessment{Rationale: v.Rationale}
	switch v.Outcome {
	case guardian.OutcomeAllow:
		a.Outcome = approval.OutcomeAllow
	case guardian.OutcomeDeny:
		a.Outcome = approval.OutcomeDeny
	default:
		// Anything else is not an outcome: the procedure fails closed and
		// says what came back.
		a.Outcome = v.Outcome.String()
	}
	if v.RiskLevel != guardian.RiskUnspecified {
		a.RiskLevel = v.RiskLevel.String()
	}
	a.UserAuthorization = v.UserAuthorization.String()
	return a, nil
}

// failed makes any deadline a review timeout (the procedure denies with
// a text that invites one retry).
func (r *Reviewer) failed(l blockTimeout, p *process, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", approval.ErrReviewTimeout, l.failed(r.in, p, err))
	}
	return l.failed(r.in, p, err)
}
