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
