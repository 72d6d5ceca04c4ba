package guardian_test

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// cautious is a complete Guardian: it lets read-only tools run and denies
// every other call with a rationale the model is given. The host asks it
// only about calls that need approval, and fails closed: an error or a
// Verdict without an Outcome denies the call.
type cautious struct{}

func (cautious) Review(_ context.Context, a guardian.Action) (guardian.Verdict, error) {
	if a.Annotations != nil && a.Annotations.ReadOnly {
		return guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskLow,
			Rationale: a.Tool + " only reads"}, nil
	}
	return guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh,
		Rationale: a.Tool + " may change something; ask the user to run it"}, nil
}

// A Guardian plugin is a type with a Review method and a main that serves
// it:
//
//	func main() { guardian.Serve(cautious{}) }
//
// Here it reviews two calls as toolgate would send them. To test it over
// the real gRPC connection, use sdk/plugintest.Guardian.
func Example() {
	var g guardian.Reviewer = cautious{}
	for _, a := range []guardian.Action{
		{Server: "files", Tool: "read_file", Annotations: &sdk.Annotations{ReadOnly: true}},
		{Server: "files", Tool: "write_file"},
	} {
		v, err := g.Review(context.Background(), a)
		fmt.Printf("%s: %v (risk %v) %q %v\n", a.Tool, v.Outcome, v.RiskLevel, v.Rationale, err)
	}
	// Output:
	// read_file: allow (risk low) "read_file only reads" <nil>
	// write_file: deny (risk high) "write_file may change something; ask the user to run it" <nil>
}
