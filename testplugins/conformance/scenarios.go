package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/mcpclient"
)

// scenarioEnv is what a scenario gets from the runner.
type scenarioEnv struct {
	serverURL string
	// context is MCP_CONFORMANCE_CONTEXT (nil when unset). It may hold
	// client secrets: never log it.
	context json.RawMessage
	log     hclog.Logger
}

// scenario plays the client side of one conformance scenario. It returns
// nil when everything the client can observe went as the scenario expects;
// the server side's verdict is in checks.json.
type scenario func(ctx context.Context, env scenarioEnv) error

// scenarioTable maps the runner's scenario names to their client side.
// The auth scenarios drive the host's OAuth code (host/oauth) through
// mcpclient.HTTP.OAuth, configured the way a user's server block would
// configure it for that kind of server (see auth.go).
func scenarioTable() map[string]scenario {
	t := map[string]scenario{
		"initialize":                          runInitialize,
		"tools_call":                          runToolsCall,
		"elicitation-sep1034-client-defaults": runElicitationDefaults,
		"sse-retry":                           runSSERetry,
		"auth/client-credentials-basic":       runClientCredentials,
		"auth/client-credentials-jwt":         runClientCredentials,
		"auth/cross-app-access-complete-flow": runCrossApp,
	}
	for _, name := range authCodeScenarios {
		t[name] = runLogin
	}
	return t
}

func scenarioNames() []string {
	names := make([]string, 0, len(scenarioTable()))
	for name := range scenarioTable() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// connect opens a session with toolgate's own client, built the way the
// host builds it for a `url` server block with default settings (protocol
// "auto", no extra headers, no OAuth), with the given handlers.
func connect(ctx context.Context, env scenarioEnv, handlers mcpclient.Handlers) (*mcpclient.Client, error) {
	return connectWith(ctx, env, handlers, nil)
}

// connectWith is connect with an OAuth handler.
func connectWith(ctx context.Context, env scenarioEnv, handlers mcpclient.Handlers, oauth auth.OAuthHandler) (*mcpclient.Client, error) {
	c, err := mcpclient.New(mcpclient.Options{
		Name:     "conformance",
		HTTP:     &mcpclient.HTTP{URL: env.serverURL, OAuth: oauth},
		Logger:   env.log.Named("mcpclient"),
		Handlers: handlers,
	})
	if err != nil {
		return nil, fmt.Errorf("building client: %w", err)
	}
	if err := c.Connect(ctx); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", env.serverURL, err)
	}
	if init := c.InitializeResult(); init != nil {
		env.log.Info("connected", "protocol", init.ProtocolVersion, "server", serverName(init.ServerInfo))
	}
	return c, nil
}

// closeClient closes c and keeps the first error.
func closeClient(c *mcpclient.Client, errp *error) {
	if err := c.Close(); err != nil && *errp == nil {
		*errp = fmt.Errorf("closing client: %w", err)
	}
}

func serverName(info *mcp.Implementation) string {
	if info == nil {
		return ""
	}
	return info.Name + " " + info.Version
}

// runInitialize: the server checks the initialize request (protocol
// version, clientInfo name and version).
func runInitialize(ctx context.Context, env scenarioEnv) (err error) {
	c, err := connect(ctx, env, mcpclient.Handlers{})
	if err != nil {
		return err
	}
	defer closeClient(c, &err)
	return nil
}

// runToolsCall: list tools, then call add_numbers.
func runToolsCall(ctx context.Context, env scenarioEnv) (err error) {
	c, err := connect(ctx, env, mcpclient.Handlers{})
	if err != nil {
		return err
	}
	defer closeClient(c, &err)
	const a, b = 5, 3
	res, err := callListedTool(ctx, env, c, "add_numbers", map[string]any{"a": a, "b": b})
	if err != nil {
		return err
	}
	if text := resultText(res); !strings.Contains(text, fmt.Sprint(a+b)) {
		return fmt.Errorf("checking add_numbers result: want the sum %d in %q", a+b, text)
	}
	return nil
}

// runElicitationDefaults: the tool elicits a form whose fields all have
// defaults; the answerer accepts and must fill every omitted field.
func runElicitationDefaults(ctx context.Context, env scenarioEnv) (err error) {
	c, err := connect(ctx, env, mcpclient.Handlers{Elicit: acceptWithDefaults(env.log.Named("elicit"))})
	if err != nil {
		return err
	}
	defer closeClient(c, &err)
	_, err = callListedTool(ctx, env, c, "test_client_elicitation_defaults", map[string]any{})
	return err
}

// runSSERetry: the server answers initialize with 2025-03-26, then closes
// the tools/call SSE stream after a priming event with retry: 500; the
// transport must resume with GET and Last-Event-ID and get the result
// there.
func runSSERetry(ctx context.Context, env scenarioEnv) (err error) {
	c, err := connect(ctx, env, mcpclient.Handlers{})
	if err != nil {
		return err
	}
	defer closeClient(c, &err)
	_, err = callListedTool(ctx, env, c, "test_reconnection", map[string]any{})
	return err
}

// callListedTool lists the server's tools, checks name is among them and
// calls it; a tool error result is a failure.
func callListedTool(ctx context.Context, env scenarioEnv, c *mcpclient.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == name }) {
		listed := make([]string, 0, len(tools))
		for _, t := range tools {
			listed = append(listed, t.Name)
		}
		return nil, fmt.Errorf("finding tool %q: the server listed %v", name, listed)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, mcpclient.CallOptions{})
	if err != nil {
		return nil, err
	}
	text := resultText(res)
	env.log.Info("tool answered", "tool", name, "is_error", res.IsError, "text", text)
	if res.IsError {
		return nil, fmt.Errorf("calling tool %q: the server returned an error result: %s", name, text)
	}
	return res, nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
