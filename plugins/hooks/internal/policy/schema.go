package policy

import (
	"encoding/json"

	"github.com/toolgate/toolgate/sdk"
)

// Decisions a rule (or the default) may take, as written in the config.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
	DecisionAsk   = "ask"
)

// schema is the config block the plugin declares; config.go decodes the JSON
// it produces.
func schema() sdk.ConfigSchema {
	annotations := sdk.ConfigSchema{Attributes: []sdk.Attribute{
		{Name: "destructive", Type: sdk.TypeBool, Description: "Match tools whose destructiveHint is this value (undeclared counts as true unless the tool is read-only, as MCP says)."},
		{Name: "read_only", Type: sdk.TypeBool, Description: "Match tools whose readOnlyHint is this value (undeclared counts as false)."},
		{Name: "open_world", Type: sdk.TypeBool, Description: "Match tools whose openWorldHint is this value (undeclared counts as true)."},
		{Name: "idempotent", Type: sdk.TypeBool, Description: "Match tools whose idempotentHint is this value (undeclared counts as false)."},
	}}
	argument := sdk.ConfigSchema{Attributes: []sdk.Attribute{
		{Name: "name", Type: sdk.TypeString, Required: true, Description: `The argument's name (a top-level key of the arguments object), or "*" for every string anywhere in the arguments.`},
		{Name: "outside_dir", Type: sdk.TypeString, Description: "Match when the argument is a path that resolves outside this directory (relative: against the call's cwd)."},
		{Name: "host_not_in", Type: sdk.ListOf(sdk.TypeString), Description: `Match when the argument is a URL or host whose host is not in this list ("example.com", "*.example.com").`},
		{Name: "regex", Type: sdk.TypeString, Description: "Match when the argument's value matches this regular expression (RE2 syntax, unanchored)."},
	}}
	caller := sdk.ConfigSchema{Attributes: []sdk.Attribute{
		{Name: "subject", Type: sdk.ListOf(sdk.TypeString), Description: `Globs over the caller's subject (the token's sub claim); one must match.`},
		{Name: "groups", Type: sdk.ListOf(sdk.TypeString), Description: `Globs over the caller's groups; one of the caller's groups must match one of them.`},
		{Name: "email", Type: sdk.ListOf(sdk.TypeString), Description: `Globs over the caller's email ("*@example.com"); one must match.`},
		{Name: "client_id", Type: sdk.ListOf(sdk.TypeString), Description: `Globs over the OAuth client the caller used; one must match.`},
	}}
	rule := sdk.ConfigSchema{
		Attributes: []sdk.Attribute{
			{Name: "name", Type: sdk.TypeString, Description: "A name for the rule, used in messages and logs."},
			{Name: "server", Type: sdk.TypeString, Description: `Glob over the server block's name ("git*"): * matches any run except "/", ** also crosses "/", ? one character, [a-z] a class.`},
			{Name: "tool", Type: sdk.TypeString, Description: `Glob over the tool's raw name ("delete_*", "github/**"): * matches any run except "/", ** also crosses "/".`},
			{Name: "decision", Type: sdk.TypeString, Required: true, Description: `"allow", "deny" or "ask" (leave it to the reviewer).`},
			{Name: "message", Type: sdk.TypeString, Description: "For deny: the text the model gets. For allow: recorded with the approval."},
			{Name: "events", Type: sdk.ListOf(sdk.TypeString), Description: `Events the rule applies to: "permission_request", "pre_tool_use", and for rules about callers only "pre_resource_read", "pre_prompt_get". Default: all.`},
		},
		Blocks: []sdk.NestedBlock{
			{TypeName: "annotations", Nesting: sdk.NestingSingle, Block: annotations, Description: "Match the tool's MCP annotations; only the attributes set are compared."},
			{TypeName: "caller", Nesting: sdk.NestingSingle, Block: caller, Description: "Match who made the call (toolgate serve with auth); every attribute set must match. A call with no known caller never matches."},
			{TypeName: "argument", Nesting: sdk.NestingList, Block: argument, Description: "Match an argument value; every argument block of a rule must match. Each block sets exactly one of outside_dir, host_not_in, regex."},
		},
	}
	request := func(what string) sdk.ConfigSchema {
		return sdk.ConfigSchema{
			Attributes: []sdk.Attribute{
				{Name: "server", Type: sdk.TypeString, Description: `Glob over the server block's name; unset: any server.`},
				{Name: "decision", Type: sdk.TypeString, Required: true, Description: `"deny" refuses the ` + what + `; "allow" lets it go on without consulting the caller rules. A deny wins over an allow.`},
				{Name: "message", Type: sdk.TypeString, Description: "For deny: the text the client gets."},
			},
			Blocks: []sdk.NestedBlock{
				{TypeName: "caller", Nesting: sdk.NestingSingle, Block: caller, Description: "Match who asked; every attribute set must match."},
			},
		}
	}
	return sdk.ConfigSchema{
		Attributes: []sdk.Attribute{
			{Name: "default", Type: sdk.TypeString, Default: json.RawMessage(`"ask"`), Description: `Decision when no rule matches: "allow", "deny" or "ask".`},
			{Name: "default_message", Type: sdk.TypeString, Description: "The text the model gets when the default decision is deny."},
		},
		Blocks: []sdk.NestedBlock{
			{TypeName: "rule", Nesting: sdk.NestingList, Block: rule, Description: "A rule; the first rule that matches a call decides."},
			{TypeName: "resource", Nesting: sdk.NestingMap, Block: request("read"), Description: `Decide resource reads whose raw URI matches the label's glob ("file:///etc/**").`},
			{TypeName: "prompt", Nesting: sdk.NestingMap, Block: request("prompt get"), Description: `Decide prompt gets whose raw prompt name matches the label's glob.`},
		},
	}
}
