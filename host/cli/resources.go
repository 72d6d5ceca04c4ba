package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/internal/safetext"
)

// catalogOf starts a host for the config, takes its catalog and closes it.
// With server, it waits for that server only, and fails when it is not
// ready; without, for every server, and fails when a required one failed.
func (g *globals) catalogOf(cmd *cobra.Command, progress bool, server string) (*manager.Snapshot, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	progress = progress && g.isTerminal(g.io.Err)
	if server != "" {
		if !slices.ContainsFunc(cfg.Servers, func(s config.Server) bool { return s.Name == server }) {
			return nil, exit(ExitUsage, fmt.Errorf("--server %q: no server block has that name (see toolgate servers)", server))
		}
		h, err := g.startForServer(cmd.Context(), cfg, false, host.Options{}, server)
		if err != nil {
			return nil, err
		}
		defer h.Close()
		if err := h.Manager.NotReady(server); err != nil {
			return nil, exit(ExitFailure, err)
		}
		return h.Manager.Snapshot(), nil
	}
	h, _, err := g.startHost(cmd.Context(), cfg, progress, host.Options{})
	if err != nil {
		return nil, err
	}
	cat := h.Manager.Snapshot()
	reqErr := h.Manager.RequiredError()
	_ = h.Close()
	if reqErr != nil {
		return nil, exit(ExitFailure, reqErr)
	}
	return cat, nil
}

func newResourcesCmd(g *globals) *cobra.Command {
	var (
		asJSON bool
		server string
	)
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List every server's resources and resource templates (after enabled_resources / disabled_resources)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := g.catalogOf(cmd, !asJSON, server)
			if err != nil {
				return err
			}
			type row struct {
				Server      string `json:"server"`
				URI         string `json:"uri,omitempty"`
				URITemplate string `json:"uri_template,omitempty"`
				Name        string `json:"name,omitempty"`
				MIMEType    string `json:"mime_type,omitempty"`
			}
			rows := []row{}
			for _, r := range cat.Resources {
				if server != "" && r.Server != server {
					continue
				}
				rows = append(rows, row{Server: r.Server, URI: r.Resource.URI, Name: r.Resource.Name, MIMEType: r.Resource.MIMEType})
			}
			for _, t := range cat.Templates {
				if server != "" && t.Server != server {
					continue
				}
				rows = append(rows, row{Server: t.Server, URITemplate: t.Template.URITemplate, Name: t.Template.Name, MIMEType: t.Template.MIMEType})
			}
			if asJSON {
				return printJSON(g, struct {
					Revision  uint64 `json:"revision"`
					Resources []row  `json:"resources"`
				}{cat.Revision, rows})
			}
			if len(rows) == 0 {
				fmt.Fprintln(g.io.Out, "no resources: no ready server offers any, or every one is filtered out")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tURI\tNAME\tMIME TYPE")
			for _, r := range rows {
				uri := r.URI
				if uri == "" {
					uri = r.URITemplate + " (template)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server, safetext.Line(uri), safetext.Line(r.Name), safetext.Line(r.MIMEType))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().StringVar(&server, "server", "", "list only this server's, waiting for no other server")
	return cmd
}

func newPromptsCmd(g *globals) *cobra.Command {
	var (
		asJSON bool
		server string
	)
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List every server's prompts (after enabled_prompts / disabled_prompts)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := g.catalogOf(cmd, !asJSON, server)
			if err != nil {
				return err
			}
			type row struct {
				Server      string                `json:"server"`
				Name        string                `json:"name"`
				Description string                `json:"description,omitempty"`
				Arguments   []*mcp.PromptArgument `json:"arguments,omitempty"`
			}
			rows := []row{}
			for _, p := range cat.Prompts {
				if server != "" && p.Server != server {
					continue
				}
				rows = append(rows, row{Server: p.Server, Name: p.Prompt.Name, Description: p.Prompt.Description, Arguments: p.Prompt.Arguments})
			}
			if asJSON {
				return printJSON(g, struct {
					Revision uint64 `json:"revision"`
					Prompts  []row  `json:"prompts"`
				}{cat.Revision, rows})
			}
			if len(rows) == 0 {
				fmt.Fprintln(g.io.Out, "no prompts: no ready server offers any, or every one is filtered out")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tPROMPT\tARGUMENTS\tDESCRIPTION")
			for _, r := range rows {
				args := ""
				for i, a := range r.Arguments {
					if i > 0 {
						args += ", "
					}
					args += a.Name
					if a.Required {
						args += "*"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server, safetext.Line(r.Name), safetext.Line(args), safetext.Line(r.Description))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().StringVar(&server, "server", "", "list only this server's, waiting for no other server")
	return cmd
}

func newReadCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read one resource of a server, as the model's read_mcp_resource does (recorded in the audit log)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			// Only the server read from matters; others may still start.
			h, err := g.startForServer(cmd.Context(), cfg, false, host.Options{}, args[0])
			if err != nil {
				return err
			}
			defer h.Close()
			if err := h.Manager.NotReady(args[0]); err != nil {
				return exit(ExitFailure, err)
			}
			step := h.NewStep("")
			if _, ok := step.Lookup(exposure.ReadResourceToolName); !ok {
				return exit(ExitFailure, fmt.Errorf("no ready server offers resources: `toolgate resources` lists them"))
			}
			raw, _ := json.Marshal(map[string]string{"server": args[0], "uri": args[1]})
			res := step.Call(asClient(cmd), exposure.CallRequest{Name: exposure.ReadResourceToolName, Arguments: raw})
			if asJSON {
				if err := printJSON(g, res.Raw); err != nil {
					return exit(ExitFailure, err)
				}
			} else {
				for _, c := range res.Raw.Content {
					switch c := c.(type) {
					case *mcp.EmbeddedResource:
						if c.Resource.Blob != nil {
							fmt.Fprintf(g.io.Out, "(%d bytes of %s; --json shows them)\n", len(c.Resource.Blob), c.Resource.MIMEType)
						} else {
							fmt.Fprintln(g.io.Out, safetext.Block(c.Resource.Text))
						}
					case *mcp.TextContent:
						fmt.Fprintln(g.io.Out, safetext.Block(c.Text))
					case *mcp.ImageContent:
						fmt.Fprintf(g.io.Out, "(an image: %d bytes of %s; --json shows it)\n", len(c.Data), c.MIMEType)
					case *mcp.AudioContent:
						fmt.Fprintf(g.io.Out, "(audio: %d bytes of %s; --json shows it)\n", len(c.Data), c.MIMEType)
					}
				}
			}
			if res.Status != events.CallCompleted {
				return exit(ExitFailure, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
