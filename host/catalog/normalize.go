package catalog

import (
	"crypto/sha1" //nolint:gosec // a naming hash, not a security boundary; SHA-1 keeps names compatible with Codex
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// Name limits of the flat model name, in bytes.
const (
	// DefaultNameLimit fits every model provider (Anthropic and Bedrock
	// reject longer function names; OpenAI accepts 128).
	DefaultNameLimit = 64
	// MinNameLimit is the smallest limit at which the collision algorithm
	// still yields a non-empty namespace: 1 byte of namespace, the 2-byte
	// delimiter and the 13-byte hash suffix. Smaller limits are raised to it.
	MinNameLimit = 1 + len(Delimiter) + hashSuffixLen
)

const (
	// Delimiter joins Namespace and Name in the flat ModelName.
	Delimiter = "__"
	// NamespacePrefix marks prefixed namespaces: "mcp__" + server.
	NamespacePrefix = "mcp__"

	hashHexLen    = 12
	hashSuffixLen = 1 + hashHexLen // "_" + 12 hex digits
)

// Options tunes Normalize. The zero value names tools for a 64-byte limit
// with every server prefixed.
type Options struct {
	// NameLimit is the maximum length in bytes of the flat ModelName.
	// 0 means DefaultNameLimit; values below MinNameLimit are raised to it.
	NameLimit int
	// Unprefixed reports servers whose tools keep their sanitized raw name
	// as the whole ModelName (config prefix = false). nil means none.
	Unprefixed func(server string) bool
	// Logger receives a warning for each dropped tool (an exact duplicate
	// or a nil Tool). nil discards them.
	Logger hclog.Logger
}

func (o Options) limit() int {
	switch {
	case o.NameLimit == 0:
		return DefaultNameLimit
	case o.NameLimit < MinNameLimit:
		return MinNameLimit
	default:
		return o.NameLimit
	}
}

// candidate is one tool on its way through the naming passes.
type candidate struct {
	raw      RawTool
	toolID   string // raw tool identity: the sort key and collision hash input
	nsID     string // raw namespace identity
	prefixed bool
	ns       string // "" for unprefixed servers
	name     string
	flat     string // flatName(ns, name), kept in step with them
}

func (c *candidate) rename(ns, name string) {
	c.ns, c.name, c.flat = ns, name, flatName(ns, name)
}

func flatName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + Delimiter + name
}

// Normalize gives every tool of every server a model name that is unique
// across the whole set, matches ^[A-Za-z0-9_]+$ and fits Options.NameLimit
// bytes. It follows Codex's algorithm (reference codex-mcp-client.md §2.3)
// with the 128-byte limit replaced by NameLimit, so that names at limit 128
// are byte-for-byte those Codex gives.
//
// Pass the tools of all ready servers after filtering: filtered tools must
// not influence collision hashing. The result is sorted by raw identity and
// is the same for any order of the input. A second tool with the same
// server and raw name is dropped with a warning.
func Normalize(tools []RawTool, opts Options) []ToolInfo {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	limit := opts.limit()

	backing := make([]candidate, 0, len(tools))
	servers := make(map[string]serverNaming)
	seen := make(map[string]struct{}, len(tools))
	for _, rt := range tools {
		if rt.Tool == nil {
			log.Warn("skipping tool without a definition", "server", rt.Server)
			continue
		}
		sn, ok := servers[rt.Server]
		if !ok {
			sn = newServerNaming(rt.Server, opts.Unprefixed)
			servers[rt.Server] = sn
		}
		c := sn.candidate(rt)
		if _, dup := seen[c.toolID]; dup {
			log.Warn("skipping duplicated tool", "server", rt.Server, "tool", rt.Tool.Name)
			continue
		}
		seen[c.toolID] = struct{}{}
		backing = append(backing, c)
	}
	cands := make([]*candidate, len(backing))
	for i := range backing {
		cands[i] = &backing[i]
	}

	hashNamespaceCollisions(cands)
	hashToolCollisions(cands)
	slices.SortFunc(cands, func(a, b *candidate) int { return strings.Compare(a.toolID, b.toolID) })
	fitAndDeduplicate(cands, limit)

	out := make([]ToolInfo, len(cands))
	for i, c := range cands {
		tool := withoutUntrustedMeta(c.raw.Tool)
		out[i] = ToolInfo{
			Server:       c.raw.Server,
			Tool:         tool,
			Namespace:    c.ns,
			Name:         c.name,
			ModelName:    c.flat,
			ModelVisible: modelVisible(tool.Meta),
		}
	}
	return out
}

// serverNaming is what every tool of one server shares (§2.3 steps 1, 3
// and 4 for the namespace).
type serverNaming struct {
	nsID     string
	ns       string
	prefixed bool
}

func newServerNaming(server string, unprefixed func(string) bool) serverNaming {
	// A generic host has no connectors: the namespace is the server name and
	// the connector id is empty, which keeps hashes identical to Codex's.
	// The identities use raw names so that two servers whose names sanitize
	// alike still hash differently.
	sn := serverNaming{
		nsID:     server + "\x00" + server + "\x00",
		prefixed: unprefixed == nil || !unprefixed(server),
	}
	if sn.prefixed {
		sn.ns = sanitize(server)
		if !strings.HasPrefix(sn.ns, NamespacePrefix) {
			sn.ns = NamespacePrefix + sn.ns
		}
	}
	return sn
}

func (sn serverNaming) candidate(rt RawTool) candidate {
	c := candidate{
		raw:      rt,
		nsID:     sn.nsID,
		toolID:   sn.nsID + "\x00" + rt.Tool.Name + "\x00" + rt.Tool.Name,
		prefixed: sn.prefixed,
	}
	c.rename(sn.ns, sanitize(rt.Tool.Name))
	return c
}

// sanitize replaces every character outside [A-Za-z0-9_] with one "_" per
// character, so "-" and "." go too: some model APIs reject them. An invalid
// UTF-8 byte counts as one character.
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	if isModelSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && isModelSafeByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func isModelSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isModelSafeByte(s[i]) {
			return false
		}
	}
	return true
}

func isModelSafeByte(b byte) bool {
	return b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// hashNamespaceCollisions gives every server whose prefixed namespace
// sanitizes like another server's a hashed namespace (§2.3 step 5). All
// members of a colliding group change, so no server silently owns the
// plain name. Unprefixed servers have no namespace; their names collide at
// tool level instead.
func hashNamespaceCollisions(cands []*candidate) {
	groups := make(map[string]collisionGroup)
	for _, c := range cands {
		if c.prefixed {
			groups[c.ns] = groups[c.ns].add(c.nsID)
		}
	}
	hashed := make(map[string]string) // nsID → hashed namespace, one per server
	for _, c := range cands {
		if !c.prefixed || !groups[c.ns].collides {
			continue
		}
		ns, ok := hashed[c.nsID]
		if !ok {
			suffix := hashSuffix(c.nsID)
			if base, cut := strings.CutSuffix(c.ns, Delimiter); cut {
				ns = base + suffix + Delimiter
			} else {
				ns = c.ns + suffix
			}
			hashed[c.nsID] = ns
		}
		c.rename(ns, c.name)
	}
}

// collisionGroup tracks whether one name is claimed by more than one raw
// identity; exact duplicates were dropped before, but tools of one server
// share a namespace identity.
type collisionGroup struct {
	firstID  string
	used     bool
	collides bool
}

func (g collisionGroup) add(id string) collisionGroup {
	switch {
	case !g.used:
		return collisionGroup{firstID: id, used: true}
	case id != g.firstID:
		g.collides = true
	}
	return g
}

// hashToolCollisions gives every tool whose flat name equals another
// tool's a hashed name (§2.3 step 6). Grouping on the flat name rather
// than on (namespace, name) also catches an unprefixed tool that looks like
// a prefixed one ("mcp__files__read") and names that only collide once
// joined ("mcp__a"+"b__c" vs "mcp__a__b"+"c").
func hashToolCollisions(cands []*candidate) {
	groups := make(map[string]collisionGroup, len(cands))
	for _, c := range cands {
		groups[c.flat] = groups[c.flat].add(c.toolID)
	}
	for _, c := range cands {
		if groups[c.flat].collides {
			c.rename(c.ns, c.name+hashSuffix(c.toolID))
		}
	}
}

// fitAndDeduplicate enforces the length limit and global uniqueness of the
// flat name (§2.3 step 8). cands must be sorted by toolID: when two names
// still collide, the later one in that order is rehashed, which keeps the
// outcome independent of input order.
func fitAndDeduplicate(cands []*candidate, limit int) {
	used := make(map[string]struct{}, len(cands))
	for _, c := range cands {
		if len(c.flat) <= limit {
			if _, taken := used[c.flat]; !taken {
				used[c.flat] = struct{}{}
				continue
			}
		}
		origNS, origName := c.ns, c.name
		for n := 0; ; n++ {
			input := c.toolID
			if n > 0 {
				input += "\x00" + strconv.Itoa(n)
			}
			c.rename(fitWithSuffix(origNS, origName, hashSuffix(input), limit))
			if _, taken := used[c.flat]; !taken {
				used[c.flat] = struct{}{}
				break
			}
		}
	}
}

// fitWithSuffix keeps as much of the name as fits before the suffix; when
// even the bare suffix does not fit beside the namespace, it cuts the
// namespace instead, so the tool still gets a name.
func fitWithSuffix(ns, name, suffix string, limit int) (string, string) {
	maxName := limit
	if ns != "" {
		maxName = limit - len(ns) - len(Delimiter)
	}
	if maxName >= len(suffix) {
		// Sanitized names are ASCII, so a byte cut is a character cut.
		return ns, name[:min(len(name), maxName-len(suffix))] + suffix
	}
	return ns[:limit-len(suffix)-len(Delimiter)], suffix
}

func hashSuffix(identity string) string {
	sum := sha1.Sum([]byte(identity)) //nolint:gosec // see import
	return "_" + hex.EncodeToString(sum[:])[:hashHexLen]
}
