// Package guardian is the SDK for Guardian plugins: automatic reviewers
// that decide, instead of a human, whether a tool call that needs approval
// may run.
//
// A Guardian implements [Reviewer] and serves it from main in one line:
//
//	type readOnly struct{}
//
//	func (readOnly) Review(_ context.Context, a guardian.Action) (guardian.Verdict, error) {
//		if a.Annotations != nil && a.Annotations.ReadOnly {
//			return guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskLow,
//				Rationale: "the tool only reads"}, nil
//		}
//		return guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskMedium,
//			Rationale: "only read-only tools are approved automatically; ask the user"}, nil
//	}
//
//	func main() { guardian.Serve(readOnly{}) }
//
// The host fails closed: a Guardian that returns an error, times out,
// crashes, or answers without an outcome denies the call. A denial is a
// [Verdict], never an error; its rationale is given to the model.
//
// The host dispenses a [*Client] through go-plugin with
// VersionedPlugins(nil); its errors match the sdk sentinels as described in
// package sdk.
//
// This package must not import anything of the host, nor the MCP go-sdk.
//
// # Concurrency
//
// The host may review several calls at once, so a [Reviewer] must be safe
// for concurrent use; so is a [*Client]. Review receives the host's
// deadline and cancellation in its ctx and must return when it is done.
package guardian
