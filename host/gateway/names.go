package gateway

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/toolgate/toolgate/host/exposure"
)

// MaxToolNameLen is the longest tool name the MCP specification allows.
const MaxToolNameLen = 128

// ErrToolName is matched (errors.Is) by a [*NameError]: some tools cannot
// be served upstream under the names the configuration gives them. It is a
// configuration error; the caller reports it and does not serve (exit code
// 2 in the CLI). The text names every owner and the fix.
var ErrToolName = errors.New("tools cannot be served upstream under their names")

// Owner is one tool that claims an upstream name.
type Owner struct {
	// Server is the owning server; "" for the host's own tool_search.
	Server string
	// Tool is the tool's raw name on that server.
	Tool string
	// Prefixed is false for servers with prefix = false, whose tools keep
	// their raw names upstream.
	Prefixed bool
	// Decl is the server block, for the message.
	Decl hcl.Range
}

func (o Owner) String() string {
	if o.Server == "" {
		return fmt.Sprintf("toolgate's own %q", o.Tool)
	}
	s := fmt.Sprintf("tool %q of server %q", o.Tool, o.Server)
	if o.Decl.Filename != "" {
		s += fmt.Sprintf(" (%s:%d)", o.Decl.Filename, o.Decl.Start.Line)
	}
	return s
}

// NameConflict is one upstream name that cannot be served: two owners
// (a collision) or one owner whose raw name the protocol does not allow.
type NameConflict struct {
	Name   string
	Owners []Owner
	// Invalid is true when the name itself is not allowed upstream.
	Invalid bool
	// Kept is the owner still served under Name because it held the name
	// before the conflict arose (a reload, a server that started late or
	// changed its tools); nil when none is served.
	Kept *Owner
	// Held is the owner that holds Name but is not listed now because its
	// server is down: the name waits for it, and Owners are not served.
	Held *Owner
}

func (c NameConflict) String() string {
	if c.Invalid {
		o := c.Owners[0]
		if o.Prefixed {
			return fmt.Sprintf("%s would be served as %q, longer than the %d characters MCP allows. "+
				"Fix: set exposure { name_limit } to %d or less.", o, c.Name, MaxToolNameLen, MaxToolNameLen)
		}
		return fmt.Sprintf("%s has prefix = false, so it would be served as %q, which MCP does not allow "+
			"(tool names use only A-Z a-z 0-9 _ . - and at most %d characters). "+
			"Fix: set prefix = true in the server %q block, or add %q to its disabled_tools.",
			o, c.Name, MaxToolNameLen, o.Server, o.Tool)
	}
	parts := make([]string, len(c.Owners))
	for i, o := range c.Owners {
		parts[i] = o.String()
	}
	fix := "set prefix = true in the server block(s) " + strings.Join(unprefixedOf(c.Owners), ", ") +
		" so their tools are served as mcp__<server>__<tool>, or disable one of the tools with disabled_tools"
	if c.Held != nil {
		return fmt.Sprintf("upstream tool name %q belongs to %s, whose server is down; %s also claims it and is not served under it meanwhile. "+
			"Fix: set prefix = true in the server block(s) %s, or disable one of the tools with disabled_tools.",
			c.Name, c.Held, strings.Join(parts, " and "), strings.Join(unprefixedOf(append(c.Owners, *c.Held)), ", "))
	}
	kept := ""
	if c.Kept != nil {
		kept = fmt.Sprintf(" Until then %s is still served under it, as before; the others are not served.", c.Kept)
	}
	return fmt.Sprintf("upstream tool name %q is claimed by %s. Fix: %s.%s", c.Name, strings.Join(parts, " and by "), fix, kept)
}

// unprefixedOf quotes the servers of owners that have prefix = false.
func unprefixedOf(owners []Owner) []string {
	var out []string
	for _, o := range owners {
		if o.Server != "" && !o.Prefixed && !slices.Contains(out, strconv.Quote(o.Server)) {
			out = append(out, strconv.Quote(o.Server))
		}
	}
	return out
}

// NameError lists every upstream naming conflict of a catalog.
type NameError struct {
	Conflicts []NameConflict
}

func (e *NameError) Error() string {
	if len(e.Conflicts) == 1 {
		return "serve tools upstream: " + e.Conflicts[0].String()
	}
	lines := make([]string, 0, len(e.Conflicts)+1)
	lines = append(lines, fmt.Sprintf("serve tools upstream: %d tool names conflict:", len(e.Conflicts)))
	for _, c := range e.Conflicts {
		lines = append(lines, "  - "+c.String())
	}
	return strings.Join(lines, "\n")
}

// Is lets callers match [ErrToolName].
func (e *NameError) Is(target error) bool { return target == ErrToolName }

// upstreamName is the name a tool is served under: its flat model name,
// or for a server with prefix = false its raw name, so that a gateway in
// front of one server is transparent.
func upstreamName(t *exposure.Tool) string {
	if t.Server == "" || t.Exposure == exposure.Builtin || t.ServerInfo.Config.Prefix {
		return t.ModelName
	}
	return t.RawName()
}

// validToolName reports whether MCP allows name for a tool.
func validToolName(name string) bool {
	if name == "" || len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch b := name[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '.', b == '-':
		default:
			return false
		}
	}
	return true
}

// nameTools gives each tool its upstream name. Tools whose name collides
// or is not allowed are left out and reported in a *NameError; the others
// are returned in name order. holders maps names served before to the
// tools that hold them (nil at start): of tools colliding on a name, its
// holder keeps it, and a holder missing from tools (its server is down;
// the caller drops holders that are gone for good) keeps it from the
// others, so a reload or a late server never takes a name from its tool.
func nameTools(tools []*exposure.Tool, holders map[string]Owner) (map[string]*exposure.Tool, error) {
	claims := map[string][]*exposure.Tool{}
	for _, t := range tools {
		n := upstreamName(t)
		claims[n] = append(claims[n], t)
	}
	names := make([]string, 0, len(claims))
	for n := range claims {
		names = append(names, n)
	}
	sort.Strings(names)

	out := make(map[string]*exposure.Tool, len(claims))
	var conflicts []NameConflict
	for _, n := range names {
		ts := claims[n]
		holder, held := holders[n]
		var holding *exposure.Tool
		for _, t := range ts {
			if held && ownerKey(t.Server, t.RawName()) == ownerKey(holder.Server, holder.Tool) {
				holding = t
			}
		}
		switch {
		case held && holding == nil:
			c := NameConflict{Name: n, Held: &holder}
			for _, t := range ts {
				c.Owners = append(c.Owners, ownerOf(t))
			}
			conflicts = append(conflicts, c)
		case len(ts) > 1:
			c := NameConflict{Name: n}
			for _, t := range ts {
				c.Owners = append(c.Owners, ownerOf(t))
			}
			sort.Slice(c.Owners, func(i, j int) bool {
				a, b := c.Owners[i], c.Owners[j]
				return a.Server < b.Server || a.Server == b.Server && a.Tool < b.Tool
			})
			if holding != nil {
				kept := ownerOf(holding)
				c.Kept = &kept
				out[n] = holding
			}
			conflicts = append(conflicts, c)
		case !validToolName(n):
			conflicts = append(conflicts, NameConflict{Name: n, Owners: []Owner{ownerOf(ts[0])}, Invalid: true})
		default:
			out[n] = ts[0]
		}
	}
	if len(conflicts) > 0 {
		return out, &NameError{Conflicts: conflicts}
	}
	return out, nil
}

// ownerKey identifies a tool across catalogs by its server and raw name;
// model names of unprefixed tools can change when another server's tools
// arrive.
func ownerKey(server, raw string) string { return server + "\x00" + raw }

func ownerOf(t *exposure.Tool) Owner {
	if t.Server == "" || t.Exposure == exposure.Builtin {
		return Owner{Tool: t.ModelName, Prefixed: true}
	}
	return Owner{Server: t.Server, Tool: t.RawName(), Prefixed: t.ServerInfo.Config.Prefix, Decl: t.ServerInfo.Config.DeclRange}
}
