package guardian

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/guardianv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// Client is the host's handle on a Guardian plugin. It implements
// [Reviewer]; its errors match sdk.ErrPluginExited,
// sdk.ErrPluginUnavailable, sdk.ErrBadResponse, sdk.ErrNotConfigured,
// context.DeadlineExceeded and context.Canceled, or are a
// *sdk.PluginError. Any error must be read as a denial.
//
// A Client is safe for concurrent use.
type Client struct {
	rpc    guardianv1.GuardianServiceClient
	plugin wire.PluginClient
	exited context.Context
}

// NewClient returns a client of the Guardian served on conn. exited must be
// cancelled when the plugin process exits (go-plugin's GRPCClient
// context); nil means there is no process to watch.
func NewClient(conn grpc.ClientConnInterface, exited context.Context) *Client {
	if exited == nil {
		exited = context.Background()
	}
	pc := wire.NewPluginClient(conn, exited, sdk.KindGuardian)
	return &Client{
		rpc:    guardianv1.NewGuardianServiceClient(conn),
		plugin: pc,
		exited: exited,
	}
}

// Exited is closed when the plugin process has exited.
func (c *Client) Exited() <-chan struct{} { return c.exited.Done() }

// Info describes the plugin.
func (c *Client) Info(ctx context.Context) (sdk.Info, error) { return c.plugin.Info(ctx) }

// Configure sends the plugin its configuration and returns its
// diagnostics (not an error: check them with sdk.HasErrors).
func (c *Client) Configure(ctx context.Context, config json.RawMessage) ([]sdk.Diagnostic, error) {
	return c.plugin.Configure(ctx, config)
}

// Review asks the Guardian about action.
func (c *Client) Review(ctx context.Context, action Action) (Verdict, error) {
	resp, err := c.rpc.Review(ctx, &guardianv1.ReviewRequest{Action: actionToPB(action)})
	if err != nil {
		return Verdict{}, fmt.Errorf("calling guardian Review: %w", wire.FromRPC(ctx, err, c.exited))
	}
	v, err := verdictFromPB(resp)
	if err != nil {
		return Verdict{}, fmt.Errorf("calling guardian Review: %w", err)
	}
	return v, nil
}

func actionToPB(a Action) *guardianv1.Action {
	out := &guardianv1.Action{
		Server:          a.Server,
		Tool:            a.Tool,
		ArgumentsJson:   a.Arguments,
		Annotations:     wire.AnnotationsToPB(a.Annotations),
		ToolTitle:       a.ToolTitle,
		ToolDescription: a.ToolDescription,
		SessionId:       a.SessionID,
		CallId:          a.CallID,
		Caller:          wire.CallerToPB(a.Caller),
	}
	for _, h := range a.History {
		out.History = append(out.History, &guardianv1.HistoryEntry{
			Server:        h.Server,
			Tool:          h.Tool,
			ArgumentsJson: h.Arguments,
			Outcome:       h.Outcome,
		})
	}
	return out
}

func verdictFromPB(resp *guardianv1.ReviewResponse) (Verdict, error) {
	var v Verdict
	switch resp.GetOutcome() {
	case guardianv1.Outcome_OUTCOME_ALLOW:
		v.Outcome = OutcomeAllow
	case guardianv1.Outcome_OUTCOME_DENY:
		v.Outcome = OutcomeDeny
	default:
		return Verdict{}, wire.BadResponse("outcome %s is not ALLOW or DENY", resp.GetOutcome())
	}
	switch r := resp.GetRiskLevel(); r {
	case guardianv1.RiskLevel_RISK_LEVEL_UNSPECIFIED:
	case guardianv1.RiskLevel_RISK_LEVEL_LOW:
		v.RiskLevel = RiskLow
	case guardianv1.RiskLevel_RISK_LEVEL_MEDIUM:
		v.RiskLevel = RiskMedium
	case guardianv1.RiskLevel_RISK_LEVEL_HIGH:
		v.RiskLevel = RiskHigh
	case guardianv1.RiskLevel_RISK_LEVEL_CRITICAL:
		v.RiskLevel = RiskCritical
	default:
		return Verdict{}, wire.BadResponse("unknown risk level %d", r)
	}
	switch u := resp.GetUserAuthorization(); u {
	case guardianv1.UserAuthorization_USER_AUTHORIZATION_UNSPECIFIED, guardianv1.UserAuthorization_USER_AUTHORIZATION_UNKNOWN:
	case guardianv1.UserAuthorization_USER_AUTHORIZATION_LOW:
		v.UserAuthorization = AuthorizationLow
	case guardianv1.UserAuthorization_USER_AUTHORIZATION_MEDIUM:
		v.UserAuthorization = AuthorizationMedium
	case guardianv1.UserAuthorization_USER_AUTHORIZATION_HIGH:
		v.UserAuthorization = AuthorizationHigh
	default:
		return Verdict{}, wire.BadResponse("unknown user authorization %d", u)
	}
	v.Rationale = resp.GetRationale()
	return v, nil
}
