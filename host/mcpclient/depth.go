package mcpclient

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// jsonDepth is how deeply data (valid JSON) nests objects and arrays:
// 0 for a scalar, 1 for {} or [].
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = stringEnd(data, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// tooDeep reports whether line is JSON that go-sdk refuses only for its
// nesting (deeper than maxMessageDepth).
func tooDeep(line []byte) bool {
	return jsonDepth(line) > maxMessageDepth && json.Valid(line)
}

// deepMessage is the top level of a message too deep for go-sdk's
// decoder, read without its limit: enough to answer or route it.
type deepMessage struct {
	id     jsonrpc.ID
	method string
	result json.RawMessage
	isErr  bool
}

// readDeepMessage reads the members of a too-deep message. ok is false
// when it is not a JSON-RPC 2.0 message at all.
func readDeepMessage(line []byte) (m deepMessage, ok bool) {
	var top struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	// encoding/json reads up to 10000 levels; deeper still is refused
	// here like any message that cannot be read.
	if json.Unmarshal(line, &top) != nil || top.Version != "2.0" {
		return m, false
	}
	if top.ID != nil {
		var raw any
		if json.Unmarshal(top.ID, &raw) != nil {
			return m, false
		}
		id, err := jsonrpc.MakeID(raw)
		if err != nil {
			return m, false
		}
		m.id = id
	}
	m.method, m.result, m.isErr = top.Method, top.Result, top.Error != nil
	return m, true
}

// errTooDeep is the text of the error a too-deep answer becomes.
func errTooDeep(what string, depth int) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the server's %s nests %d levels deep, more than the %d levels toolgate's MCP library (go-sdk) decodes; "+
			"this call failed, the server stays connected (a bug or an attack in the server: report it to its authors)",
			what, depth, maxMessageDepth),
	}
}
