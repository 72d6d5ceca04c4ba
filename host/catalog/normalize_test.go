package catalog

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // test mirrors the naming hash
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// named is the part of a ToolInfo that naming decides.
type named struct {
	Server, Raw, Namespace, Name, ModelName string
}

func project(infos []ToolInfo) []named {
	out := make([]named, len(infos))
	for i, ti := range infos {
		out[i] = named{ti.Server, ti.RawName(), ti.Namespace, ti.Name, ti.ModelName}
	}
	return out
}

func raw(pairs ...string) []RawTool {
	var out []RawTool
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, RawTool{Server: pairs[i], Tool: &mcp.Tool{Name: pairs[i+1]}})
	}
	return out
}

// want builds an expected row; ModelName follows from the shape rule.
func want(server, rawName, ns, name string) named {
	return named{server, rawName, ns, name, flatName(ns, name)}
}

// toolIdentity spells out the raw tool identity of §2.3 step 1 so the
// tests derive hashes from it independently of the implementation.
func toolIdentity(server, tool string) string {
	return server + "\x00" + server + "\x00" + "\x00" + tool + "\x00" + tool
}

func sha12(s string) string {
	sum := sha1.Sum([]byte(s)) //nolint:gosec // see import
	return hex.EncodeToString(sum[:])[:12]
}

func onlyServers(names ...string) func(string) bool {
	return func(s string) bool { return slices.Contains(names, s) }
}

func TestNormalizeWorkedExamples(t *testing.T) {
	a := strings.Repeat
	s125 := a("s", 125)
	tests := []struct {
		name       string
		limit      int
		unprefixed func(string) bool
		in         []RawTool
		want       []named
		// hashes maps a raw identity to the 12 hex digits the test pins;
		// each must equal sha1(identity), proving where the suffix came from.
		hashes map[string]string
	}{
		// The first five are pinned by Codex's unit tests (limit 128).
		{
			name: "plain names", limit: 128,
			in:   raw("server1", "tool1", "server1", "tool2"),
			want: []named{want("server1", "tool1", "mcp__server1", "tool1"), want("server1", "tool2", "mcp__server1", "tool2")},
		},
		{
			name: "dots and dashes become underscores", limit: 128,
			in:   raw("server.one", "tool.two-three"),
			want: []named{want("server.one", "tool.two-three", "mcp__server_one", "tool_two_three")},
		},
		{
			name: "dashes in server and tool", limit: 128,
			in:   raw("music-studio", "get-strudel-guide"),
			want: []named{want("music-studio", "get-strudel-guide", "mcp__music_studio", "get_strudel_guide")},
		},
		{
			name: "colliding namespaces are both hashed", limit: 128,
			in: raw("basic-server", "lookup", "basic_server", "query"),
			want: []named{
				want("basic-server", "lookup", "mcp__basic_server_756d1be7d674", "lookup"),
				want("basic_server", "query", "mcp__basic_server_eec657cc7f92", "query"),
			},
			hashes: map[string]string{
				"basic-server\x00basic-server\x00": "756d1be7d674",
				"basic_server\x00basic_server\x00": "eec657cc7f92",
			},
		},
		{
			name: "colliding tool names are both hashed", limit: 128,
			in: raw("server", "tool-name", "server", "tool_name"),
			want: []named{
				want("server", "tool-name", "mcp__server", "tool_name_72d5533b71c6"),
				want("server", "tool_name", "mcp__server", "tool_name_28fc4d6eebf6"),
			},
			hashes: map[string]string{
				toolIdentity("server", "tool-name"): "72d5533b71c6",
				toolIdentity("server", "tool_name"): "28fc4d6eebf6",
			},
		},
		{
			name: "long tool name fills exactly the limit", limit: 128,
			in:     raw("my_server", a("a", 128)),
			want:   []named{want("my_server", a("a", 128), "mcp__my_server", a("a", 99)+"_8bed60c91bf7")},
			hashes: map[string]string{toolIdentity("my_server", a("a", 128)): "8bed60c91bf7"},
		},
		{
			name: "name that exactly fits is kept", limit: 128,
			in:   raw("codex_apps", a("a", 111)),
			want: []named{want("codex_apps", a("a", 111), "mcp__codex_apps", a("a", 111))},
		},
		{
			name: "one byte over the limit is hashed", limit: 128,
			in:     raw("codex_apps", a("a", 112)),
			want:   []named{want("codex_apps", a("a", 112), "mcp__codex_apps", a("a", 98)+"_ab56bdac2fad")},
			hashes: map[string]string{toolIdentity("codex_apps", a("a", 112)): "ab56bdac2fad"},
		},
		{
			name: "namespace too long is cut", limit: 128,
			in:     raw(s125, "tool"),
			want:   []named{want(s125, "tool", "mcp__"+a("s", 108), "_8e4321fcaa73")},
			hashes: map[string]string{toolIdentity(s125, "tool"): "8e4321fcaa73"},
		},
		{
			name: "unicode becomes one underscore per character", limit: 128,
			in:   raw("srv", "ünïcode tool"),
			want: []named{want("srv", "ünïcode tool", "mcp__srv", "_n_code_tool")},
		},
		{
			// Codex keeps the server as an unprefixed namespace
			// (history/search); toolgate flattens unprefixed tools to the
			// bare name, which is what a gateway fronting one server needs.
			name: "unprefixed servers keep bare names", limit: 128,
			unprefixed: onlyServers("history", "notes"),
			in:         raw("history", "search", "notes", "read", "calendar", "list"),
			want: []named{
				want("calendar", "list", "mcp__calendar", "list"),
				want("history", "search", "", "search"),
				want("notes", "read", "", "read"),
			},
		},

		// The same inputs at the default limit of 64.
		{
			name: "64: plain names", limit: 64,
			in:   raw("server1", "tool1", "server1", "tool2"),
			want: []named{want("server1", "tool1", "mcp__server1", "tool1"), want("server1", "tool2", "mcp__server1", "tool2")},
		},
		{
			name: "64: dots and dashes become underscores", limit: 64,
			in:   raw("server.one", "tool.two-three"),
			want: []named{want("server.one", "tool.two-three", "mcp__server_one", "tool_two_three")},
		},
		{
			name: "64: dashes in server and tool", limit: 64,
			in:   raw("music-studio", "get-strudel-guide"),
			want: []named{want("music-studio", "get-strudel-guide", "mcp__music_studio", "get_strudel_guide")},
		},
		{
			name: "64: colliding namespaces are both hashed", limit: 64,
			in: raw("basic-server", "lookup", "basic_server", "query"),
			want: []named{
				want("basic-server", "lookup", "mcp__basic_server_756d1be7d674", "lookup"),
				want("basic_server", "query", "mcp__basic_server_eec657cc7f92", "query"),
			},
		},
		{
			name: "64: colliding tool names are both hashed", limit: 64,
			in: raw("server", "tool-name", "server", "tool_name"),
			want: []named{
				want("server", "tool-name", "mcp__server", "tool_name_72d5533b71c6"),
				want("server", "tool_name", "mcp__server", "tool_name_28fc4d6eebf6"),
			},
		},
		{
			name: "64: long tool name fills exactly the limit", limit: 64,
			in:     raw("my_server", a("a", 128)),
			want:   []named{want("my_server", a("a", 128), "mcp__my_server", a("a", 35)+"_8bed60c91bf7")},
			hashes: map[string]string{toolIdentity("my_server", a("a", 128)): "8bed60c91bf7"},
		},
		{
			name: "64: a name that fits at 128 is hashed at 64", limit: 64,
			in:     raw("codex_apps", a("a", 111)),
			want:   []named{want("codex_apps", a("a", 111), "mcp__codex_apps", a("a", 34)+"_03919bf7d26e")},
			hashes: map[string]string{toolIdentity("codex_apps", a("a", 111)): "03919bf7d26e"},
		},
		{
			name: "64: one byte over 128 is hashed", limit: 64,
			in:     raw("codex_apps", a("a", 112)),
			want:   []named{want("codex_apps", a("a", 112), "mcp__codex_apps", a("a", 34)+"_ab56bdac2fad")},
			hashes: map[string]string{toolIdentity("codex_apps", a("a", 112)): "ab56bdac2fad"},
		},
		{
			name: "64: namespace too long is cut", limit: 64,
			in:     raw(s125, "tool"),
			want:   []named{want(s125, "tool", "mcp__"+a("s", 44), "_8e4321fcaa73")},
			hashes: map[string]string{toolIdentity(s125, "tool"): "8e4321fcaa73"},
		},
		{
			name: "64: unicode becomes one underscore per character", limit: 64,
			in:   raw("srv", "ünïcode tool"),
			want: []named{want("srv", "ünïcode tool", "mcp__srv", "_n_code_tool")},
		},
		{
			name: "64: unprefixed servers keep bare names", limit: 64,
			unprefixed: onlyServers("history", "notes"),
			in:         raw("history", "search", "notes", "read", "calendar", "list"),
			want: []named{
				want("calendar", "list", "mcp__calendar", "list"),
				want("history", "search", "", "search"),
				want("notes", "read", "", "read"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for identity, hash := range tt.hashes {
				if got := sha12(identity); got != hash {
					t.Fatalf("test table: sha1(%q)[:12] = %s, table pins %s", identity, got, hash)
				}
			}
			got := Normalize(tt.in, Options{NameLimit: tt.limit, Unprefixed: tt.unprefixed})
			if diff := cmp.Diff(tt.want, project(got)); diff != "" {
				t.Errorf("Normalize mismatch (-want +got):\n%s", diff)
			}
			for _, ti := range got {
				if len(ti.ModelName) > tt.limit {
					t.Errorf("%q is %d bytes, over the limit %d", ti.ModelName, len(ti.ModelName), tt.limit)
				}
			}
		})
	}
}

func TestNormalizeEdgeCases(t *testing.T) {
	a := strings.Repeat
	myID := toolIdentity("my_server", a("a", 128))
	// The hashed form of a*128 at limit 64, listed as a tool of its own.
	squatter := a("a", 35) + "_" + sha12(myID)
	tests := []struct {
		name       string
		limit      int
		unprefixed func(string) bool
		in         []RawTool
		want       []named
	}{
		{
			// The squatter sorts first and takes the n=0 name, so the long
			// tool must fall through to the hash of identity ␀ "1".
			name: "taken hash retries with a counter", limit: 64,
			in: raw("my_server", a("a", 128), "my_server", squatter),
			want: []named{
				want("my_server", squatter, "mcp__my_server", squatter),
				want("my_server", a("a", 128), "mcp__my_server", a("a", 35)+"_"+sha12(myID+"\x00"+"1")),
			},
		},
		{
			name: "empty names sanitize to an underscore", limit: 64,
			in:   raw("", ""),
			want: []named{want("", "", "mcp___", "_")},
		},
		{
			name: "server already prefixed is not prefixed twice", limit: 64,
			in:   raw("mcp__files", "read"),
			want: []named{want("mcp__files", "read", "mcp__files", "read")},
		},
		{
			name: "prefixed server name colliding with a plain one", limit: 64,
			in: raw("files", "read", "mcp__files", "write"),
			want: []named{
				want("files", "read", "mcp__files_"+sha12("files\x00files\x00"), "read"),
				want("mcp__files", "write", "mcp__files_"+sha12("mcp__files\x00mcp__files\x00"), "write"),
			},
		},
		{
			name: "namespace hash goes before a trailing delimiter", limit: 64,
			in: raw("x__", "t", "x--", "t"),
			want: []named{
				want("x--", "t", "mcp__x_"+sha12("x--\x00x--\x00")+"__", "t"),
				want("x__", "t", "mcp__x_"+sha12("x__\x00x__\x00")+"__", "t"),
			},
		},
		{
			name: "unprefixed tool that looks like a prefixed one", limit: 64,
			unprefixed: onlyServers("front"),
			in:         raw("files", "read", "front", "mcp__files__read"),
			want: []named{
				want("files", "read", "mcp__files", "read_"+sha12(toolIdentity("files", "read"))),
				want("front", "mcp__files__read", "", "mcp__files__read_"+sha12(toolIdentity("front", "mcp__files__read"))),
			},
		},
		{
			name: "two unprefixed servers with the same tool", limit: 64,
			unprefixed: onlyServers("one", "two"),
			in:         raw("two", "search", "one", "search"),
			want: []named{
				want("one", "search", "", "search_"+sha12(toolIdentity("one", "search"))),
				want("two", "search", "", "search_"+sha12(toolIdentity("two", "search"))),
			},
		},
		{
			name: "long unprefixed name uses the whole limit", limit: 64,
			unprefixed: onlyServers("front"),
			in:         raw("front", a("b", 70)),
			want:       []named{want("front", a("b", 70), "", a("b", 51)+"_"+sha12(toolIdentity("front", a("b", 70))))},
		},
		{
			name: "names that only collide once joined", limit: 64,
			in: raw("a", "b__c", "a__b", "c"),
			want: []named{
				want("a", "b__c", "mcp__a", "b__c_"+sha12(toolIdentity("a", "b__c"))),
				want("a__b", "c", "mcp__a__b", "c_"+sha12(toolIdentity("a__b", "c"))),
			},
		},
		{
			name: "zero limit means 64", limit: 0,
			in:   raw("my_server", a("a", 128)),
			want: []named{want("my_server", a("a", 128), "mcp__my_server", a("a", 35)+"_"+sha12(myID))},
		},
		{
			name: "tiny limit is raised to the minimum", limit: 3,
			in:   raw("server", "tool"),
			want: []named{want("server", "tool", "m", "_"+sha12(toolIdentity("server", "tool")))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Normalize(tt.in, Options{NameLimit: tt.limit, Unprefixed: tt.unprefixed})
			if diff := cmp.Diff(tt.want, project(got)); diff != "" {
				t.Errorf("Normalize mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeDropsDuplicatesWithWarning(t *testing.T) {
	var logs bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn, JSONFormat: true})
	first := &mcp.Tool{Name: "read", Description: "first"}
	in := []RawTool{
		{Server: "files", Tool: first},
		{Server: "files", Tool: &mcp.Tool{Name: "read", Description: "second"}},
		{Server: "files", Tool: nil},
	}
	got := Normalize(in, Options{Logger: logger})
	if len(got) != 1 || got[0].Tool.Description != "first" {
		t.Fatalf("Normalize kept %+v, want only the first files/read", project(got))
	}
	if got[0].ModelName != "mcp__files__read" {
		t.Errorf("a dropped duplicate must not cause hashing: got %q", got[0].ModelName)
	}
	for _, wantLog := range []string{`"skipping duplicated tool"`, `"tool":"read"`, `"skipping tool without a definition"`} {
		if !strings.Contains(logs.String(), wantLog) {
			t.Errorf("log lacks %s:\n%s", wantLog, logs.String())
		}
	}
}

var modelNameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// randomCatalog builds n raw tools meant to break naming: unicode,
// separators, very long names, names that sanitize alike, servers that
// look prefixed, unprefixed tools that look like prefixed ones, and exact
// duplicates.
func randomCatalog(rng *rand.Rand, n int) []RawTool {
	pieces := []string{
		"a", "b", "z", "Q", "0", "9", "_", "__", "-", ".", " ", "/", ":", "mcp__",
		"ü", "ï", "日本", "🙂", "\u200b", "\xff", "tool", "server", "read", "search",
	}
	word := func(maxPieces int) string {
		var b strings.Builder
		for range 1 + rng.IntN(maxPieces) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	var servers []string
	for range 60 {
		s := word(4)
		switch rng.IntN(10) {
		case 0:
			s = strings.Repeat(s, 1+rng.IntN(60)) // very long server
		case 1:
			s = strings.ReplaceAll(s, "_", "-") // sanitizes like another
		}
		servers = append(servers, s)
	}
	// Deliberate namespace collisions.
	servers = append(servers, "files", "mcp__files", "fi-les", "fi.les", "x__", "x--", "front", "front2")

	out := make([]RawTool, 0, n)
	for len(out) < n {
		server := servers[rng.IntN(len(servers))]
		var name string
		switch r := rng.IntN(20); {
		case r == 0 && len(out) > 0:
			prev := out[rng.IntN(len(out))]
			server, name = prev.Server, prev.Tool.Name // exact duplicate
		case r == 1:
			name = strings.Repeat(word(3), 10+rng.IntN(40)) // very long
		case r == 2:
			name = "mcp__files__read" // looks like a prefixed flat name
		case r == 3 && len(out) > 0:
			// Same sanitized form, different raw name.
			prev := out[rng.IntN(len(out))]
			server, name = prev.Server, strings.ReplaceAll(prev.Tool.Name, "_", "-")
		default:
			name = word(6)
		}
		out = append(out, RawTool{Server: server, Tool: &mcp.Tool{Name: name}})
	}
	return out
}

func TestNormalizeProperties(t *testing.T) {
	unprefixed := func(s string) bool {
		return strings.HasPrefix(s, "front") || strings.Contains(s, "日本")
	}
	for _, seed := range []uint64{1, 2, 42, 1337, 20260817} {
		for _, limit := range []int{64, 128} {
			t.Run(fmt.Sprintf("seed %d limit %d", seed, limit), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
				in := randomCatalog(rng, 10_000)
				opts := Options{NameLimit: limit, Unprefixed: unprefixed}
				got := Normalize(in, opts)

				distinct := make(map[[2]string]bool)
				for _, rt := range in {
					distinct[[2]string{rt.Server, rt.Tool.Name}] = true
				}
				if len(got) != len(distinct) {
					t.Errorf("got %d tools, want one per distinct raw identity: %d", len(got), len(distinct))
				}
				used := make(map[string]named, len(got))
				for _, ti := range got {
					n := named{ti.Server, ti.RawName(), ti.Namespace, ti.Name, ti.ModelName}
					if prev, dup := used[ti.ModelName]; dup {
						t.Fatalf("model name %q given twice: %+v and %+v", ti.ModelName, prev, n)
					}
					used[ti.ModelName] = n
					if len(ti.ModelName) > limit {
						t.Errorf("%q is %d bytes, over %d", ti.ModelName, len(ti.ModelName), limit)
					}
					if !modelNameRE.MatchString(ti.ModelName) {
						t.Errorf("%q has characters outside [A-Za-z0-9_]", ti.ModelName)
					}
					if ti.ModelName != flatName(ti.Namespace, ti.Name) {
						t.Errorf("%+v: ModelName is not Namespace+__+Name", n)
					}
					if unprefixed(ti.Server) != (ti.Namespace == "") {
						t.Errorf("%+v: namespace does not follow the prefix setting", n)
					}
				}

				for range 3 {
					shuffled := slices.Clone(in)
					rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
					if diff := cmp.Diff(project(got), project(Normalize(shuffled, opts))); diff != "" {
						t.Fatalf("output depends on input order (-first +shuffled):\n%s", diff)
					}
				}
			})
		}
	}
}

func BenchmarkNormalize10000(b *testing.B) {
	in := make([]RawTool, 0, 10_000)
	for i := range 10_000 {
		server := fmt.Sprintf("server-%02d", i%50)
		name := fmt.Sprintf("tool.%d", i/50)
		if i%97 == 0 {
			name = fmt.Sprintf("tool_%d", i/50) // collides with tool.N once sanitized
		}
		in = append(in, RawTool{Server: server, Tool: &mcp.Tool{
			Name: name,
			Meta: mcp.Meta{"connector_id": "x", "ui": map[string]any{"visibility": []any{"model"}}},
		}})
	}
	b.ReportAllocs()
	for b.Loop() {
		Normalize(in, Options{NameLimit: 64})
	}
}
