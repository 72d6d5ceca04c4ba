package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/inbox"
)

// approverTokenEnv holds an approver's credential for the approvals
// commands when it is not serve's static token (an OAuth access token).
const approverTokenEnv = "TOOLGATE_APPROVER_TOKEN"

// inboxFlags locate the running toolgate serve whose inbox the approvals
// commands talk to.
type inboxFlags struct {
	url string
}

func (f *inboxFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "url", "", "toolgate serve's base URL, e.g. http://127.0.0.1:8931 or unix:/path/to/socket "+
		"(default: approval { inbox { url } }, else serve { listen } of the configuration; env TOOLGATE_URL)")
}

// inboxClient is the JSON API of a running serve's inbox.
type inboxClient struct {
	base   string
	token  string
	client *http.Client
}

// inboxClient finds the serve to talk to and the credential to send: the
// URL from --url, $TOOLGATE_URL or the configuration; the token from
// $TOOLGATE_APPROVER_TOKEN, else the variable serve { token_env_var }
// names.
func (g *globals) inboxClient(f *inboxFlags) (*inboxClient, error) {
	base := f.url
	if base == "" {
		base, _ = g.io.LookupEnv("TOOLGATE_URL")
	}
	token, _ := g.io.LookupEnv(approverTokenEnv)
	if base == "" || token == "" {
		cfg, err := g.loadConfig()
		if err != nil && base == "" {
			return nil, fmt.Errorf("%w (or pass --url of the running toolgate serve)", err)
		}
		if cfg != nil {
			if base == "" {
				base = "http://" + cfg.Serve.Listen
				if strings.HasPrefix(cfg.Serve.Listen, gateway.UnixPrefix) {
					base = cfg.Serve.Listen
				}
				if in := cfg.Approval.Inbox; in != nil && in.URL != "" {
					base = in.URL
				}
			}
			if token == "" && cfg.Serve.TokenEnvVar != "" {
				token, _ = g.io.LookupEnv(cfg.Serve.TokenEnvVar)
			}
		}
	}
	c := &inboxClient{base: strings.TrimSuffix(base, "/"), token: strings.TrimSpace(token), client: &http.Client{Timeout: 30 * time.Second}}
	if path, ok := strings.CutPrefix(base, gateway.UnixPrefix); ok {
		c.base = "http://localhost"
		c.client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}
	}
	return c, nil
}

func (c *inboxClient) do(ctx context.Context, method, path string, body, into any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("toolgate serve URL %q: %w", c.base, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Toolgate-Client", "cli")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("no toolgate serve answers at %s (is it running with --http? pass --url): %w", c.base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		if resp.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("toolgate serve refused the credential (HTTP 401): export serve's token in the variable its token_env_var names, or an OAuth access token in $%s", approverTokenEnv)
		}
		return fmt.Errorf("toolgate serve answered %s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			return fmt.Errorf("toolgate serve sent an answer that is not the approvals API's JSON (is %s a toolgate serve?): %w", c.base, err)
		}
	}
	return nil
}

func newApprovalsCmd(g *globals) *cobra.Command {
	var (
		f      inboxFlags
		asJSON bool
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the approvals a running toolgate serve holds for a human",
		Long: `List the calls a running toolgate serve holds for approval (approval { inbox }):
pending ones first, with their id, caller, server, tool and arguments (secrets
redacted). Answer them with toolgate approve ID or toolgate deny ID --reason …,
or in a browser at the /approvals page of that serve.

The command talks to the serve's JSON API with the credential an approver
needs: $TOOLGATE_APPROVER_TOKEN (an OAuth access token), else serve's static
token from the variable serve { token_env_var } names; on a loopback listener
or unix socket without a token, none. Approvals live in the process that holds
the call: with several replicas, use the URL of the replica in the approval's
link.`,
		Example: `  toolgate approvals
  toolgate approvals --url http://127.0.0.1:8931 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.inboxClient(&f)
			if err != nil {
				return exit(ExitUsage, err)
			}
			var out struct {
				Approvals []inbox.Approval `json:"approvals"`
				Enabled   bool             `json:"enabled"`
			}
			if err := c.do(cmd.Context(), http.MethodGet, inbox.APIPath, nil, &out); err != nil {
				return exit(ExitFailure, err)
			}
			list := out.Approvals[:0]
			for _, a := range out.Approvals {
				if all || a.Status == inbox.StatusPending {
					list = append(list, a)
				}
			}
			if asJSON {
				return printJSON(g, list)
			}
			if !out.Enabled {
				fmt.Fprintln(g.io.Err, "toolgate: the approval inbox of this serve is off: add an inbox {} block, on a line of its own, inside the approval block of its configuration")
			}
			if len(list) == 0 {
				fmt.Fprintln(g.io.Out, "no pending approvals")
				return nil
			}
			tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tWAITING\tCALLER\tSERVER\tTOOL\tARGUMENTS")
			for _, a := range list {
				caller := "-"
				if a.Caller != nil {
					caller = a.Caller.Name()
				}
				args := string(a.Arguments)
				if len(args) > 60 {
					args = args[:57] + "..."
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, time.Since(a.Created).Round(time.Second), caller, a.Server, a.Tool, args)
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().BoolVar(&all, "all", false, "also list answered and expired approvals")
	return cmd
}

func newApproveCmd(g *globals) *cobra.Command {
	var (
		f       inboxFlags
		session bool
	)
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a call a running toolgate serve holds (see toolgate approvals)",
		Long: `Approve one held call. The approval covers exactly that call (server, tool,
definition, arguments and caller) once; --session also allows the tool for the
rest of the caller's session, where its approval mode permits. A held call then
runs at once; in retry mode the client's next identical call runs.`,
		Example: `  toolgate approve ap-k3j9x2m1q7zt
  toolgate approve ap-k3j9x2m1q7zt --session`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			scope := inbox.ScopeOnce
			if session {
				scope = inbox.ScopeSession
			}
			return g.answer(cmd.Context(), &f, args[0], "approve", inbox.AnswerRequest{Scope: scope})
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&session, "session", false, "approve the tool for the rest of the caller's session")
	return cmd
}

func newDenyCmd(g *globals) *cobra.Command {
	var (
		f      inboxFlags
		reason string
	)
	cmd := &cobra.Command{
		Use:     "deny ID --reason TEXT",
		Short:   "Deny a call a running toolgate serve holds, with a reason the caller receives",
		Example: `  toolgate deny ap-k3j9x2m1q7zt --reason "not on the production database"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.answer(cmd.Context(), &f, args[0], "deny", inbox.AnswerRequest{Reason: reason})
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why (sent to the caller as part of the denial)")
	return cmd
}

func (g *globals) answer(ctx context.Context, f *inboxFlags, id, verb string, body inbox.AnswerRequest) error {
	c, err := g.inboxClient(f)
	if err != nil {
		return exit(ExitUsage, err)
	}
	var a inbox.Approval
	if err := c.do(ctx, http.MethodPost, inbox.APIPath+"/"+id+"/"+verb, body, &a); err != nil {
		return exit(ExitFailure, err)
	}
	fmt.Fprintf(g.io.Out, "%s: %s %s on server %s\n", a.ID, a.Status, a.Tool, a.Server)
	return nil
}
