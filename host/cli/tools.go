package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/internal/safetext"
)

// toolRow is one tool as `toolgate tools` shows it.
type toolRow struct {
	ModelName  string `json:"model_name"`
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	Title      string `json:"title,omitempty"`
	Visibility string `json:"visibility"` // model | app-only
	// Exposure is direct, deferred (found through tool_search), hidden
	// (never shown to or run by the model) or builtin.
	Exposure    string               `json:"exposure"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// ApprovalMode is the resolved mode (tool block → server default → auto).
	ApprovalMode string `json:"approval_mode"`
	// NeedsApproval is true when a call goes past mode and annotations to
	// hooks, the reviewer or a human.
	NeedsApproval bool `json:"needs_approval"`
	// DefinitionChanged is true for a remembered approval ("Allow and
	// don't ask me again") bound to a definition the server has since
	// changed: the next call asks again.
	DefinitionChanged bool `json:"definition_changed,omitempty"`
}

func newToolsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List every tool: model name, raw route, annotations, approval mode and visibility",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			h, _, err := g.startHost(cmd.Context(), cfg, !asJSON && g.isTerminal(g.io.Err), host.Options{})
			if err != nil {
				return err
			}
			step := h.NewStep("")
			rev := step.Revision()
			reqErr := h.Manager.RequiredError()
			_ = h.Close()
			if reqErr != nil {
				return exit(ExitFailure, reqErr)
			}
			var rows []toolRow
			for _, t := range step.All() {
				r := rowOf(t.ToolInfo)
				r.Exposure = t.Exposure
				if t.Exposure != exposure.Builtin {
					mode := approval.ResolveMode(t.ServerInfo.Config, t.RawName())
					r.ApprovalMode = string(mode)
					r.NeedsApproval = !approval.AutoApproved(cfg.Approval, mode) && approval.RequiresApproval(mode, t.Tool.Annotations)
					if approved := t.ServerInfo.Config.Tools[t.RawName()].ApprovedDefinition; mode == config.ModeRemembered && approved != "" {
						r.DefinitionChanged = approved != approval.DefinitionHash(t.RawName(), t.Tool.Description, t.Tool.InputSchema, t.Tool.Annotations)
					}
				}
				rows = append(rows, r)
			}
			if asJSON {
				return printJSON(g, struct {
					Revision uint64    `json:"revision"`
					Tools    []toolRow `json:"tools"`
				}{rev, rows})
			}
			if len(rows) == 0 {
				fmt.Fprintln(g.io.Out, "no tools: no server is ready, or every tool is filtered out")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL NAME\tROUTE\tANNOTATIONS\tAPPROVAL\tEXPOSURE")
			for _, r := range rows {
				if r.Exposure == exposure.Builtin {
					fmt.Fprintf(tw, "%s\t(toolgate)\t%s\t-\t%s\n", r.ModelName, annotationText(r.Annotations), r.Exposure)
					continue
				}
				asks := "runs without asking"
				if r.NeedsApproval {
					asks = "asks"
				}
				if r.DefinitionChanged {
					asks = "asks again: the tool changed since it was approved"
				}
				fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s: %s\t%s\n", r.ModelName, r.Server, safetext.Line(r.Tool), annotationText(r.Annotations), r.ApprovalMode, asks, r.Exposure)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func rowOf(t catalog.ToolInfo) toolRow {
	r := toolRow{ModelName: t.ModelName, Server: t.Server, Tool: t.RawName(), Title: t.Tool.Title,
		Annotations: t.Tool.Annotations, Visibility: "model"}
	if !t.ModelVisible {
		r.Visibility = "app-only"
	}
	return r
}

// annotationText renders the hints that matter for approval, making the
// spec defaults explicit: an absent destructiveHint means destructive.
func annotationText(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "none"
	}
	var parts []string
	if a.ReadOnlyHint {
		parts = append(parts, "read-only")
	}
	switch {
	case a.DestructiveHint == nil:
	case *a.DestructiveHint:
		parts = append(parts, "destructive")
	default:
		parts = append(parts, "non-destructive")
	}
	switch {
	case a.OpenWorldHint == nil:
	case *a.OpenWorldHint:
		parts = append(parts, "open-world")
	default:
		parts = append(parts, "closed-world")
	}
	if a.IdempotentHint {
		parts = append(parts, "idempotent")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}
