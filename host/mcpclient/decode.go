package mcpclient

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxMessageDepth is the nesting go-sdk's decoder accepts; a deeper
// message is left to go-sdk, which refuses it.
const maxMessageDepth = 1000

// decodeOwnedResponse decodes a long line that holds a successful
// response (a large tool result, typically) without copying its result:
// the Response's Result is a slice of line, which the caller must own and
// never reuse. go-sdk's jsonrpc.DecodeMessage would copy the result and
// grow its read buffer by doubling on the way, allocating about four
// times the line.
//
// It returns nil for anything else (a request, an error response, a
// missing or unusable id or version, a duplicate key, nesting past
// go-sdk's limit, JSON that is not an object): the caller then decodes
// with go-sdk, which accepts or refuses it exactly as before. Keys match
// case-sensitively and unknown keys are ignored, as in go-sdk.
func decodeOwnedResponse(line []byte) *jsonrpc.Response {
	if !json.Valid(line) {
		return nil
	}
	var version, id, result []byte
	ok := eachMember(line, func(key string, value []byte) bool {
		var slot *[]byte
		switch key {
		case "jsonrpc":
			slot = &version
		case "id":
			slot = &id
		case "result":
			slot = &result
		case "method", "error":
			return false // a request, or an error: go-sdk's path
		default:
			return true
		}
		if *slot != nil {
			return false // a duplicate: let go-sdk decide which wins
		}
		*slot = value
		return true
	})
	if !ok || version == nil || id == nil || result == nil {
		return nil
	}
	var v string
	if json.Unmarshal(version, &v) != nil || v != "2.0" {
		return nil
	}
	var rawID any
	if json.Unmarshal(id, &rawID) != nil {
		return nil
	}
	msgID, err := jsonrpc.MakeID(rawID)
	if err != nil || !msgID.IsValid() {
		return nil
	}
	return &jsonrpc.Response{ID: msgID, Result: result}
}

// eachMember calls fn with each key and raw value of the JSON object in
// data, which must be valid JSON, until fn returns false. It returns false
// when fn did, when data is not an object, or when it nests deeper than
// maxMessageDepth.
func eachMember(data []byte, fn func(key string, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if data[i] == '}' {
		return true
	}
	for {
		end := stringEnd(data, i)
		key := string(data[i+1 : end-1])
		if bytes.IndexByte(data[i:end], '\\') >= 0 {
			if json.Unmarshal(data[i:end], &key) != nil {
				return false
			}
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // past ':'
		end, ok := valueEnd(data, i)
		if !ok || !fn(key, data[i:end]) {
			return false
		}
		i = skipSpace(data, end)
		if data[i] == '}' {
			return true
		}
		i = skipSpace(data, i+1) // past ','
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at i.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// valueEnd returns the index just past the JSON value starting at i (at
// depth 1, inside the message object); ok is false when it nests deeper
// than maxMessageDepth.
func valueEnd(data []byte, i int) (end int, ok bool) {
	switch data[i] {
	case '"':
		return stringEnd(data, i), true
	case '{', '[':
		depth := 1 // the message object itself
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = stringEnd(data, j) - 1
			case '{', '[':
				depth++
				if depth > maxMessageDepth {
					return 0, false
				}
			case '}', ']':
				depth--
				if depth == 1 {
					return j + 1, true
				}
			}
		}
		return len(data), true
	default: // a number or a literal
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j, true
			}
			j++
		}
		return j, true
	}
}
