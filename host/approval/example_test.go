package approval_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
)

func ExampleProcedure_Decide() {
	proc := approval.New(approval.Options{
		Approval: config.Approval{Policy: config.PolicyNever, Permissions: config.PermWorkspaceWrite},
	})
	ctx := context.Background()

	// A read-only tool needs no approval in mode auto.
	d := proc.Decide(ctx, approval.Request{Server: "files", Tool: "read_file", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}})
	fmt.Println(d.Approved, d.Step, d.By)

	// A tool without annotations may be destructive; policy never means
	// nobody may be asked, so it is denied with a text for the model.
	d = proc.Decide(ctx, approval.Request{Server: "files", Tool: "write_file"})
	fmt.Println(d.Approved, d.Step, d.By)
	fmt.Println(d.Text)
	// Output:
	// true annotations host
	// false user host
	// MCP tool call requires approval, but approval policy is never
}

// scriptedAsker answers every prompt with one choice, as a terminal user
// or an upstream client would.
type scriptedAsker struct{ answer approval.Choice }

func (a scriptedAsker) AskApproval(_ context.Context, p approval.Prompt) (approval.Choice, error) {
	fmt.Printf("asked: %s %v\n", p.Question, p.Choices)
	return a.answer, nil
}

func (scriptedAsker) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// ExampleNew builds the procedure a front end uses: an Asker for the user
// path and a Persist for "Allow and don't ask me again". "Allow for this
// session" is remembered per session: the second call is not asked.
func ExampleNew() {
	proc := approval.New(approval.Options{
		Approval: config.Approval{Policy: config.PolicyOnRequest, Permissions: config.PermWorkspaceWrite},
		Asker:    scriptedAsker{answer: approval.ChoiceAllowSession},
		Persist: func(server, tool, definition string) error {
			// toolgate writes it into the server's block:
			// config.RememberToolApproval(file, server, tool, definition).
			return nil
		},
	})
	ctx := context.Background()
	req := approval.Request{SessionID: "s1", Server: "files", Tool: "write_file"}
	for range 2 {
		d := proc.Decide(ctx, req)
		if !d.Approved {
			fmt.Println("denied:", d.Text) // returned to the model; the server is never contacted
			continue
		}
		fmt.Println("approved by", d.Step, d.By)
	}
	// Output:
	// asked: Allow the files MCP server to run tool "write_file"? [Allow Allow for this session Allow and don't ask me again Decline Cancel]
	// approved by user user
	// approved by session host
}
