package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/terminal"
	"github.com/toolgate/toolgate/host/version"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/internal/spelling"
)

func newCallCmd(g *globals) *cobra.Command {
	var (
		asJSON bool
		kv     []string
	)
	cmd := &cobra.Command{
		Use:   "call NAME [JSON]",
		Short: "Call one tool by its model name, through exposure, approval and execution",
		Long: `Call one tool the way a model would: by its model-visible name (see
toolgate tools), with a JSON object of arguments and/or --arg key=value pairs
typed by the tool's input schema. The call goes through the whole approval
chain; when it needs a human, you are asked on this terminal (with no terminal,
the call is denied and the text says how to configure an approver).

It waits only for the servers that could own NAME (usually one), not for
every configured server: a server that hangs while starting delays only
calls of its own tools. Other servers, required or not, do not affect it.

By default the result is printed as the model receives it; --json prints the
raw CallToolResult instead.

Exit codes: 0 the call completed; 1 it failed, was denied, or the tool is
unknown; 2 bad usage or an invalid configuration.`,
		Example: `  toolgate call mcp__demo__echo '{"text":"hi"}'
  toolgate call mcp__files__write_file --arg path=a.txt --arg content=hi`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			up := g.io.Upstream
			if up == nil {
				tty := terminal.New(g.io.In, g.io.Err, terminal.Options{Interactive: g.isTerminal(g.io.In), Color: g.color()})
				defer tty.Close()
				up = tty
			}
			name := args[0]
			h, step, t, err := g.startForTool(cmd.Context(), cfg, host.Options{}, name)
			if h != nil {
				defer h.Close()
			}
			if err != nil {
				return err
			}
			var raw []byte
			if len(args) == 2 {
				raw = []byte(args[1])
			}
			raw, err = mergeArgs(raw, kv, t)
			if err != nil {
				return exit(ExitUsage, err)
			}
			res := step.Call(asClient(cmd), exposure.CallRequest{Name: name, Arguments: raw, Upstream: up})
			if asJSON {
				if err := printJSON(g, res.Raw); err != nil {
					return exit(ExitFailure, err)
				}
			} else {
				// The text is the server's: escapes in it must not act on
				// the user's terminal (--json writes them as JSON escapes).
				fmt.Fprintln(g.io.Out, safetext.Block(res.Output().Text))
			}
			if res.Status != events.CallCompleted {
				return exit(ExitFailure, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the raw CallToolResult as JSON")
	cmd.Flags().StringArrayVar(&kv, "arg", nil, "an argument as key=value, typed by the tool's input schema (repeatable)")
	return cmd
}

// asClient is the context of a request a CLI command sends: toolgate's
// command is the client that asked, so its audit records say which door
// the request came by ("toolgate call", "toolgate read") and from which
// version. A terminal has no authenticated caller: the records name none,
// and no caller {} rule of a policy matches them.
func asClient(cmd *cobra.Command) context.Context {
	return identity.WithClient(cmd.Context(), &identity.Client{Name: "toolgate " + cmd.Name(), Version: version.Toolgate})
}

// mergeArgs overlays --arg pairs on the JSON argument text. Values are
// typed by the tool's input schema: strings stay strings, numbers and
// booleans are parsed, arrays and objects are read as JSON.
func mergeArgs(raw []byte, pairs []string, t *exposure.Tool) ([]byte, error) {
	if len(pairs) == 0 {
		return raw, nil
	}
	obj := map[string]any{}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("the JSON argument must be an object to combine with --arg: %w", err)
		}
	}
	props := schemaProperties(t.Tool.InputSchema)
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: want key=value", p)
		}
		typ := ""
		if prop, ok := props[k].(map[string]any); ok {
			typ, _ = prop["type"].(string)
		} else if len(props) > 0 {
			return nil, fmt.Errorf("--arg %s: %s has no argument %q (it takes: %s)", k, t.ModelName, k, strings.Join(sortedKeys(props), ", "))
		}
		val, err := typed(v, typ)
		if err != nil {
			return nil, fmt.Errorf("--arg %s: %w", k, err)
		}
		obj[k] = val
	}
	return json.Marshal(obj)
}

func typed(v, typ string) (any, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	case "array", "object":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return nil, fmt.Errorf("%q is not a JSON %s: %v", v, typ, err)
		}
		return x, nil
	}
	return v, nil
}

func schemaProperties(schema any) map[string]any {
	m, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	props, _ := m["properties"].(map[string]any)
	return props
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// suggest names the closest model-visible tools for a mistyped name.
func suggest(step *exposure.Step, name string) string {
	var best []string
	bestD := 1 << 30
	for _, t := range step.Tools() {
		d := spelling.Distance(strings.ToLower(name), strings.ToLower(t.ModelName))
		switch {
		case d < bestD:
			best, bestD = []string{t.ModelName}, d
		case d == bestD:
			best = append(best, t.ModelName)
		}
	}
	if len(best) == 0 || bestD > max(3, len(name)/3) {
		return "; see `toolgate tools` for the names"
	}
	return fmt.Sprintf("; did you mean %s?", strings.Join(best, " or "))
}
