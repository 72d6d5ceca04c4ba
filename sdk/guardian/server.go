package guardian

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/sdk/internal/pb/guardianv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// server is the plugin-side shim.
type server struct {
	guardianv1.UnimplementedGuardianServiceServer
	impl Reviewer
	log  hclog.Logger
}

func (s *server) Review(ctx context.Context, req *guardianv1.ReviewRequest) (resp *guardianv1.ReviewResponse, err error) {
	defer wire.Recover(s.log, "Review", &err)
	v, err := s.impl.Review(ctx, actionFromPB(req.GetAction()))
	if err != nil {
		return nil, wire.ToStatus(err)
	}
	// Unknown Go values go out as UNSPECIFIED; the host refuses a missing
	// outcome and reads the others as "not said".
	return &guardianv1.ReviewResponse{
		Outcome:           outcomeToPB[v.Outcome],
		RiskLevel:         riskToPB[v.RiskLevel],
		UserAuthorization: authorizationToPB[v.UserAuthorization],
		Rationale:         v.Rationale,
	}, nil
}

func actionFromPB(a *guardianv1.Action) Action {
	out := Action{
		Server:          a.GetServer(),
		Tool:            a.GetTool(),
		Arguments:       objectOrEmpty(a.GetArgumentsJson()),
		Annotations:     wire.AnnotationsFromPB(a.GetAnnotations()),
		ToolTitle:       a.GetToolTitle(),
		ToolDescription: a.GetToolDescription(),
		SessionID:       a.GetSessionId(),
		CallID:          a.GetCallId(),
		Caller:          wire.CallerFromPB(a.GetCaller()),
	}
	for _, h := range a.GetHistory() {
		out.History = append(out.History, HistoryEntry{
			Server:    h.GetServer(),
			Tool:      h.GetTool(),
			Arguments: objectOrEmpty(h.GetArgumentsJson()),
			Outcome:   h.GetOutcome(),
		})
	}
	return out
}

func objectOrEmpty(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

var outcomeToPB = map[Outcome]guardianv1.Outcome{
	OutcomeAllow: guardianv1.Outcome_OUTCOME_ALLOW,
	OutcomeDeny:  guardianv1.Outcome_OUTCOME_DENY,
}

var riskToPB = map[RiskLevel]guardianv1.RiskLevel{
	RiskLow:      guardianv1.RiskLevel_RISK_LEVEL_LOW,
	RiskMedium:   guardianv1.RiskLevel_RISK_LEVEL_MEDIUM,
	RiskHigh:     guardianv1.RiskLevel_RISK_LEVEL_HIGH,
	RiskCritical: guardianv1.RiskLevel_RISK_LEVEL_CRITICAL,
}

var authorizationToPB = map[UserAuthorization]guardianv1.UserAuthorization{
	AuthorizationUnknown: guardianv1.UserAuthorization_USER_AUTHORIZATION_UNKNOWN,
	AuthorizationLow:     guardianv1.UserAuthorization_USER_AUTHORIZATION_LOW,
	AuthorizationMedium:  guardianv1.UserAuthorization_USER_AUTHORIZATION_MEDIUM,
	AuthorizationHigh:    guardianv1.UserAuthorization_USER_AUTHORIZATION_HIGH,
}
